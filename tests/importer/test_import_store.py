"""`catalog import FOLDER` on another person's whole store (issue 23 item 5): ten small chart folders written
here in tmp_path, imported as their owner would — app by app, unknown and unsupported engines reported and
skipped (exit 3), drafts extended and never overwritten, drafts shown by `catalog list` and `catalog explain`,
a GPU memory above the card brought to the card's usable cap, build-at-start and `pip install --upgrade`
launchers named in the draft reason. Real Helm engine, real files; nothing stands in.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import olares_charts as oc
import pytest

from generator.cli import main
from generator.yamlio.loader import read_document

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"
CARD_MIB, CAP_MIB = 24463, 23000  # a 24 GB card as HAMi reports it, and the per-pod cap apps get


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    device = dest / "devices" / "lab-4090.yaml"
    device.write_text(device.read_text().replace("memory_mib: 24564", f"memory_mib: {CARD_MIB}"))
    return dest


def _edit(folder: Path, *pairs: tuple[str, str], file: str = "templates/deployment.yaml") -> Path:
    path = folder / file
    text = path.read_text()
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text)
    return folder


def _new_model(folder: Path, model: str, quant: str) -> Path:
    return _edit(folder, ("unsloth/Qwen3.6-35B-A3B-GGUF/resolve/main/Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf",
                          f"example-org/{model}-GGUF/resolve/main/{model}-{quant}.gguf"),
                 ('MODEL_FILE: "Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"', f'MODEL_FILE: "{model}-{quant}.gguf"'))


def build_store(root: Path) -> Path:
    """Ten chart folders the way someone else's store holds them."""
    store = root / "store"
    oc.llamacpp_chart(store, "aaqwen")  # supported llama.cpp, every part in the catalog
    oc.vllm_chart(store, "abgemma")  # supported vLLM
    _edit(oc.llamacpp_chart(store, "acmystery"),  # an engine nobody knows
          ('command: ["/app/llama-server"]', 'command: ["/opt/mystery/serve-model"]'),
          ("ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740", "example.org/mystery:1.0"))
    oc.vllm_chart(store, "adspeech", image="vllm/vllm-omni:v0.18.0", program="vllm-omni")  # TTS
    _edit(oc.llamacpp_chart(store, "aebuild"),  # compiles llama.cpp when the pod starts
          ('command: ["/app/llama-server"]',
           'command:\n            - sh\n            - -c\n            - |\n'
           '              git clone --depth 1 https://github.com/ggml-org/llama.cpp /src\n'
           '              cmake -S /src -B /src/build -DGGML_CUDA=ON && cmake --build /src/build -j 8\n'
           '              exec /src/build/bin/llama-server "$@"\n            - --'),
          ("ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740", "docker.io/nvidia/cuda:12.8.0-devel-ubuntu24.04"))
    _edit(oc.vllm_chart(store, "afupgrade"),  # pulls the newest vLLM at every start
          ("pip install --quiet soundfile", "pip install --upgrade vllm"))
    _edit(oc.llamacpp_chart(store, "agbiggpu"),  # asks more GPU memory than the card has
          ("limitedGpu: 23000Mi", "limitedGpu: 24Gi"), file="OlaresManifest.yaml")
    _edit(store / "agbiggpu", ('            - name: CUDA_DEVICE_MEMORY_LIMIT_0\n              value: "23000m"\n', ""))
    _new_model(oc.llamacpp_chart(store, "ahtinyone"), "Tiny-Chat-7B", "Q4_K_M")  # drafts a model ...
    _edit(_new_model(oc.llamacpp_chart(store, "aitinytwo"), "Tiny-Chat-7B", "Q8_0"),  # ... and a stack
          ("server-cuda13-b8740", "server-cuda13-b9999"))
    _new_model(oc.llamacpp_chart(store, "ajother"), "Other-Chat-3B", "Q5_K_M")
    return store


def _import(catalog: Path, capsys, *args: str) -> tuple[int, dict]:
    code = main(["import", *args, "--catalog", str(catalog), "--json"])
    return code, json.loads(capsys.readouterr().out)


def _by_name(data: dict) -> dict[str, dict]:
    return {Path(a["path"]).name: a for a in data["apps"]}


@pytest.fixture
def imported(catalog, tmp_path, capsys) -> tuple[int, dict, Path]:
    store = build_store(tmp_path)
    code, data = _import(catalog, capsys, str(store))
    return code, data, store


def test_a_whole_store_imports_app_by_app_and_exit_3_says_something_was_skipped(catalog, imported):
    code, data, _ = imported
    assert code == 3, data["problems"]
    apps = _by_name(data)
    assert len(apps) == 10
    assert apps["acmystery"]["status"] == "error"
    assert any("unknown engine" in p for p in apps["acmystery"]["problems"])
    assert any("unknown engine" in s for s in data["skipped"]) and not data["problems"] and data["partial"]
    assert apps["adspeech"]["status"] == "unsupported" and "TTS" in apps["adspeech"]["unsupported"]
    assert apps["aaqwen"]["status"] == "ok" and apps["abgemma"]["status"] == "ok"
    assert (catalog / "apps" / "aaqwen.yaml").is_file() and (catalog / "apps" / "abgemma.yaml").is_file()
    assert not (catalog / "apps" / "acmystery.yaml").exists() and not (catalog / "apps" / "adspeech.yaml").exists()
    assert not (catalog / "drafts" / "apps" / "acmystery.yaml").exists()


def test_the_text_report_says_what_was_skipped(catalog, tmp_path, capsys):
    store = build_store(tmp_path)
    code = main(["import", str(store), "--catalog", str(catalog), "--dry-run"])
    out = capsys.readouterr().out
    assert code == 3
    assert any(line.startswith("ERROR") and line.endswith("store/acmystery") for line in out.splitlines())
    assert "unknown engine" in out and "1 unsupported, 1 error; dry run, nothing was written" in out
    assert not (catalog / "apps" / "aaqwen.yaml").exists()  # a dry run writes nothing


def test_one_skipped_chart_leaves_no_draft_behind(catalog, tmp_path, capsys):
    """A chart that fails after drafting (here: an app that exists) takes its drafts with it."""
    assert main(["import", str(oc.llamacpp_chart(tmp_path / "one")), "--catalog", str(catalog)]) == 0
    capsys.readouterr()
    store = tmp_path / "two"
    _new_model(oc.llamacpp_chart(store, "marketqwen"), "Lonely-Chat-1B", "Q4_K_M")  # exists now: refused
    oc.llamacpp_chart(store, "freshqwen")
    code, data = _import(catalog, capsys, str(store))
    assert code == 3, data["problems"]
    apps = _by_name(data)
    assert apps["marketqwen"]["status"] == "error" and "exists" in apps["marketqwen"]["problems"][0]
    assert not (catalog / "drafts" / "models" / "lonely-chat-1b.yaml").exists()
    assert (catalog / "apps" / "freshqwen.yaml").is_file()


def test_drafts_extend_and_a_second_import_never_overwrites_them(catalog, imported, tmp_path, capsys):
    _, data, _ = imported
    model = catalog / "drafts" / "models" / "tiny-chat-7b.yaml"
    stack = catalog / "drafts" / "stacks" / "llama.cpp-server-cuda13-b9999.yaml"
    assert model.is_file() and stack.is_file()
    text = model.read_text()
    assert "quant: q4_k_m" in text and "quant: q8_0" in text  # the two charts' weights in one draft
    first_stack = stack.read_text()
    # a second import, from another folder: same stack id from another image port, another quant of the model
    more = tmp_path / "more"
    _edit(_new_model(oc.llamacpp_chart(more, "aktinythree"), "Tiny-Chat-7B", "Q6_K"),
          ("server-cuda13-b8740", "server-cuda13-b9999"), ('"8080"', '"8081"'), ("port: 8080", "port: 8081"),
          ("containerPort: 8080", "containerPort: 8081"))
    code, data = _import(catalog, capsys, str(more))
    assert code == 0, data["problems"]
    assert stack.read_text() == first_stack  # the first stack draft is as it was
    stacks = sorted(p.name for p in (catalog / "drafts" / "stacks").glob("llama.cpp-*.yaml"))
    assert stacks == ["llama.cpp-server-cuda13-b9999-imported.yaml", "llama.cpp-server-cuda13-b9999.yaml"]
    text = model.read_text()
    assert all(f"quant: {q}" in text for q in ("q4_k_m", "q8_0", "q6_k"))  # extended, not replaced
    assert text.count("# [draft] missing:") == 1


def test_gpu_memory_above_the_card_is_the_cards_usable_cap(catalog, imported):
    _, data, _ = imported
    app = _by_name(data)["agbiggpu"]
    assert app["status"] == "ok", app
    written = read_document(catalog / "apps" / "agbiggpu.yaml").data
    assert written.get("gpu_memory_mib", CAP_MIB) <= CAP_MIB
    assert written["gpu_memory_mib"] == CAP_MIB
    note = next(u for u in written["unmapped"] if "spec limitedGpu 24Gi (24576 MiB) is more than" in u)
    assert note.startswith("../store/agbiggpu/OlaresManifest.yaml:")  # at the manifest's line
    assert f"usable {CAP_MIB} MiB" in note and f"{CARD_MIB} MiB card" in note
    assert not any("24576 MiB)" in u and "same GPU memory" in u for u in written["unmapped"])  # no stale figure

def test_the_capped_app_passes_the_hami_rules(catalog, imported, capsys):
    capsys.readouterr()
    main(["check", "agbiggpu", "--catalog", str(catalog), "--json", "--no-lint"])
    findings = json.loads(capsys.readouterr().out)["apps"][0]["findings"]
    assert not [f for f in findings if f["rule"].startswith("HAMI")], findings


def test_build_at_start_and_pip_upgrade_launchers_are_named_in_the_draft_reason(catalog, imported):
    _, data, _ = imported
    apps = _by_name(data)
    build, upgrade = apps["aebuild"], apps["afupgrade"]
    assert build["status"] == "draft" and upgrade["status"] == "draft"
    assert any("builds the engine when the pod starts" in m and "cmake" in m for m in build["missing"])
    assert any("pip install --upgrade" in m for m in upgrade["missing"])
    head = (catalog / "drafts" / "apps" / "afupgrade.yaml").read_text()
    assert "# [draft] missing: the launcher runs `pip install --upgrade`" in head


def test_list_and_explain_show_drafts_with_what_blocks_them(catalog, imported, capsys):
    capsys.readouterr()
    assert main(["list", "--catalog", str(catalog), "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["aaqwen"]["status"] == "active"
    draft = rows["afupgrade"]
    assert draft["status"] == "draft" and draft["draft"] == "drafts/apps/afupgrade.yaml"
    assert any("pip install --upgrade" in b for b in draft["blocked_by"])
    assert "acmystery" not in rows
    assert main(["list", "--catalog", str(catalog)]) == 0
    text = capsys.readouterr().out
    assert "6 apps, 5 drafts (drafts/apps/)" in text  # the fixture's 3 apps and the store's 3
    assert "draft afupgrade (drafts/apps/afupgrade.yaml): missing: the launcher runs `pip install --upgrade`" in text
    code = main(["explain", "ahtinyone", "--catalog", str(catalog)])
    out = capsys.readouterr().out
    assert code == 1
    assert "unknown app" not in out
    assert "ahtinyone is a draft" in out and "drafts/apps/ahtinyone.yaml" in out
    assert "model tiny-chat-7b" in out
    code = main(["explain", "ahtinyone", "--catalog", str(catalog), "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 1 and shown["kind"] == "app" and shown["blocked_by"]
    assert any(d["id"] == "tiny-chat-7b" and d["kind"] == "model" for d in shown["needs"])


def test_an_explicit_hami_limit_above_the_card_is_kept_as_the_chart_wrote_it(catalog, tmp_path, capsys):
    """`CUDA_DEVICE_MEMORY_LIMIT_0=30000m` is a deliberate setting (the market's measured HAMi belt, issue 23 item
    3), not a scheduling size: the import keeps it and leaves it to `catalog check` (HAMI004)."""
    chart = _edit(oc.llamacpp_chart(tmp_path / "belt"), ('value: "23000m"', 'value: "30000m"'))
    code, data = _import(catalog, capsys, str(chart))
    assert code == 0, data["problems"]
    assert read_document(catalog / "apps" / "marketqwen.yaml").data["gpu_memory_mib"] == 30000
