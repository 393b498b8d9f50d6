"""`catalog import` of a chat template an init container writes into the weights folder by decoding an env
variable, the way github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9 writes it
(qwen36a3bvisionone/templates/deployment.yaml:16 `CHAT_TEMPLATE_B64` in a ConfigMap, :74
`echo "$CHAT_TEMPLATE_B64" | base64 -d > /models/chat_template.jinja`, :126 `--chat-template-file`).

The charts are written here (tests/importer/olares_charts.py plus a few lines); the script is parsed, never run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import olares_charts as oc
import pytest

from generator.catalog import load_catalog
from generator.cli import main
from generator.importer import writes
from generator.yamlio.loader import read_document

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"
TEMPLATE = "lab-template"
TEMPLATE_TEXT = "{# a test template #}\n{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{%- endfor %}\n"
OTHER_TEXT = "{%- for m in messages %}[{{ m.role }}] {{ m.content }}\n{%- endfor %}\n"
DECODE_LINE = 'echo "$CHAT_TEMPLATE_B64" | base64 -d > /models/chat_template.jinja'
ARGS = ["--chat-template-file", "/models/chat_template.jinja"]


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """catalog_small with one chat template (TEMPLATE_TEXT)."""
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    (dest / "chat_templates").mkdir()
    (dest / "chat_templates" / f"{TEMPLATE}.jinja").write_text(TEMPLATE_TEXT, encoding="utf-8")
    digest = hashlib.sha256(TEMPLATE_TEXT.encode()).hexdigest()
    (dest / "chat_templates" / f"{TEMPLATE}.yaml").write_text(
        f"id: {TEMPLATE}\nfile: {TEMPLATE}.jinja\nsha256: {digest}\npurpose: a test template\nsources:\n"
        "  - {ref: tests/importer/test_import_init_template.py, note: test data}\n", encoding="utf-8")
    return dest


def chart(root: Path, *, value: str | None = None, line: str = DECODE_LINE, args: list[str] = ARGS,
          init_env: dict[str, str] | None = None) -> Path:
    """The market's llama.cpp chart shape, its init container also writing a file from an env variable: `value`
    goes into the chart's ConfigMap as CHAT_TEMPLATE_B64 (read by both containers through envFrom), `init_env`
    into the init container's own `env`."""
    folder = oc.llamacpp_chart(root, extra_args=args)
    path = folder / "templates" / "deployment.yaml"
    text = path.read_text()
    if value is not None:
        text = text.replace('  THREADS: "16"\n', f'  THREADS: "16"\n  CHAT_TEMPLATE_B64: {json.dumps(value)}\n', 1)
    # the init container's script ends with the download's `fi`
    text = text.replace("              fi\n", f"              fi\n              # the chat template\n"
                                             f"              {line}\n", 1)
    if init_env:
        items = "".join(f"            - name: {k}\n              value: {json.dumps(v)}\n" for k, v in init_env.items())
        text = text.replace("          envFrom:\n", f"          env:\n{items}          envFrom:\n", 1)
    path.write_text(text)
    return folder


def b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def report(catalog: Path, capsys, *args: str) -> tuple[int, dict]:
    code = main(["import", *args, "--catalog", str(catalog), "--json"])
    return code, json.loads(capsys.readouterr().out)


def line_of(path: Path, needle: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), start=1) if needle in text)


def test_a_decoded_template_the_catalog_has_becomes_the_apps_chat_template(catalog, tmp_path, capsys):
    folder = chart(tmp_path / "in", value=b64(TEMPLATE_TEXT))
    deployment = folder / "templates" / "deployment.yaml"
    code, data = report(catalog, capsys, str(folder))
    assert code == 0, data["problems"]
    result = data["apps"][0]
    assert result["status"] == "ok", result["missing"]
    app = read_document(catalog / "apps" / "marketqwen.yaml").data
    assert app["chat_template"] == TEMPLATE
    # the argument is consumed, the variable and the init container's step are mapped, not noise
    assert "--chat-template-file" not in app.get("extra_args", ())
    assert "CHAT_TEMPLATE_B64" not in (app.get("env") or {})
    assert not any("CHAT_TEMPLATE_B64" in u or "model-downloader" in u for u in app["unmapped"])
    write_line = line_of(deployment, DECODE_LINE)
    assert any(f"deployment.yaml:{write_line}: init container model-downloader writes /models/chat_template.jinja "
               f"from env CHAT_TEMPLATE_B64" in n and f"chat_template {TEMPLATE}" in n for n in result["notes"])
    assert not (catalog / "drafts").exists()
    resolved = load_catalog(catalog).apps["marketqwen"].chat_template
    assert resolved is not None and resolved.text == TEMPLATE_TEXT


def test_an_unknown_decoded_template_is_drafted(catalog, tmp_path, capsys):
    folder = chart(tmp_path / "in", value=b64(OTHER_TEXT))
    code, data = report(catalog, capsys, str(folder))
    assert code == 0, data["problems"]
    result = data["apps"][0]
    assert result["status"] == "draft"
    assert any(m.startswith("chat_template marketqwen-chat-template: a draft") for m in result["missing"])
    draft = catalog / "drafts" / "chat_templates"
    assert (draft / "marketqwen-chat-template.jinja").read_text(encoding="utf-8") == OTHER_TEXT
    meta = read_document(draft / "marketqwen-chat-template.yaml").data
    assert meta["sha256"] == hashlib.sha256(OTHER_TEXT.encode()).hexdigest()
    # the source names the ConfigMap line holding the value
    value_line = line_of(folder / "templates" / "deployment.yaml", "CHAT_TEMPLATE_B64:")
    assert any(f"deployment.yaml:{value_line}" in str(s) for s in meta["sources"])
    app = read_document(catalog / "drafts" / "apps" / "marketqwen.yaml").data
    assert app["chat_template"] == "marketqwen-chat-template"
    assert "--chat-template-file" not in app.get("extra_args", ())


def test_dry_run_writes_no_draft_template(catalog, tmp_path, capsys):
    folder = chart(tmp_path / "in", value=b64(OTHER_TEXT))
    before = oc.snapshot(catalog)
    code, data = report(catalog, capsys, str(folder), "--dry-run")
    assert code == 0 and data["apps"][0]["status"] == "draft"
    assert "draft chat template" in [w["action"] for w in data["writes"]]
    assert oc.snapshot(catalog) == before


@pytest.mark.parametrize("line, newline", [
    ("printf '%s' \"$TEMPLATE_TEXT\" > /models/chat_template.jinja", False),
    ('echo "${TEMPLATE_TEXT}" > /models/chat_template.jinja', True),
])
def test_a_literal_env_written_as_is(catalog, tmp_path, capsys, line, newline):
    """A plain write of a literal `env` value of the init container (no braces: Helm would read them)."""
    text = "<|system|> plain template\nsecond line"
    folder = chart(tmp_path / "in", line=line, init_env={"TEMPLATE_TEXT": text})
    code, data = report(catalog, capsys, str(folder))
    assert code == 0, data["problems"]
    meta = data["drafts"][0]
    assert meta["kind"] == "chat template"
    written = (catalog / "drafts" / "chat_templates" / f"{meta['id']}.jinja").read_text(encoding="utf-8")
    assert written == text + ("\n" if newline else "")


def test_a_written_file_the_engine_does_not_read_is_unmapped(catalog, tmp_path, capsys):
    folder = chart(tmp_path / "in", value=b64(TEMPLATE_TEXT),
                   line='echo "$CHAT_TEMPLATE_B64" | base64 --decode > /models/other.jinja')
    code, data = report(catalog, capsys, str(folder))
    assert code == 0, data["problems"]
    result = data["apps"][0]
    assert "chat_template" not in result["app"]
    assert any("init container model-downloader writes /models/other.jinja from env CHAT_TEMPLATE_B64, which the "
               "engine does not read" in u for u in result["unmapped"])
    # the engine's own argument still reads a file the re-rendered chart would not have
    assert result["status"] == "draft"


@pytest.mark.parametrize("value, why", [
    ("not base64 at all!", "is not valid base64"),
    (b64(TEMPLATE_TEXT)[:-3], "is not valid base64"),
    (base64.b64encode(b"\xff\xfe{{ bad }}").decode(), "does not decode to UTF-8 text"),
])
def test_an_unreadable_value_is_a_problem_and_nothing_is_written(catalog, tmp_path, capsys, value, why):
    folder = chart(tmp_path / "in", value=value)
    value_line = line_of(folder / "templates" / "deployment.yaml", "CHAT_TEMPLATE_B64:")
    write_line = line_of(folder / "templates" / "deployment.yaml", DECODE_LINE)
    before = oc.snapshot(catalog)
    code = main(["import", str(folder), "--catalog", str(catalog)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"deployment.yaml:{value_line}: env CHAT_TEMPLATE_B64 {why}" in err
    assert f"deployment.yaml:{write_line} writes it to /models/chat_template.jinja" in err
    assert "nothing was written" in err
    assert oc.snapshot(catalog) == before


def test_a_value_over_the_cap_is_a_problem(catalog, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(writes, "DECODED_CAP", 64)
    folder = chart(tmp_path / "in", value=b64("x" * 65))
    code, data = report(catalog, capsys, str(folder), "--dry-run")
    assert code == 1
    assert any("env CHAT_TEMPLATE_B64 decodes to more than 64 bytes" in p
               or "env CHAT_TEMPLATE_B64 holds more than 64 bytes" in p for p in data["problems"])


def test_a_script_that_is_more_than_a_write_is_not_guessed_at(catalog, tmp_path, capsys):
    """Command substitution, an appending redirect or an unquoted variable: the line is not read as a write, so
    the argument stays and the app is a draft that says why."""
    for line in ('echo "$(cat /etc/hostname)" | base64 -d > /models/chat_template.jinja',
                 'echo "$CHAT_TEMPLATE_B64" | base64 -d >> /models/chat_template.jinja',
                 'echo $CHAT_TEMPLATE_B64 | base64 -d > /models/chat_template.jinja'):
        folder = chart(tmp_path / "in" / str(abs(hash(line))), value=b64(TEMPLATE_TEXT), line=line)
        code, data = report(catalog, capsys, str(folder), "--dry-run")
        assert code == 0, data["problems"]
        result = data["apps"][0]
        assert result["status"] == "draft" and "chat_template" not in result["app"], line
        assert any("--chat-template-file /models/chat_template.jinja" in m for m in result["missing"])
