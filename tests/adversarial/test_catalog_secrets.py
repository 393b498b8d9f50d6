"""Secrets and duplicate keys in a committed catalog (issue 22, cause 4 and a minor).

A literal token in an app's `env`, `args` or `extra_args` (or anywhere in a catalog file) used to be accepted,
printed by `explain` and rendered into the published values.yaml. Now it is an InputError at its `file:line` at
load time (generator/catalog.py `secret_problems`, the patterns of core/redact.py), naming the Olares way, with
the value never shown; `check` reports it under rule SEC001. A duplicate key names both lines.
"""

from __future__ import annotations

import dataclasses

import pytest

from generator.catalog import load_catalog
from generator.cli import main
from generator.rules import context
from generator.rules.secrets import no_literal_secret

from support.adversarial import snapshot
from support.catalogs import edit_app

TOKEN = "hf_" + "Qw12Er34Ty56Ui78Op90AsDfGhJkLz"


@pytest.mark.parametrize("changes, field", [
    ({"env": {"HF_TOKEN": TOKEN}}, "env.HF_TOKEN"),
    ({"env": {"MY_DOWNLOAD_TOKEN": "plain-literal-value"}}, "env.MY_DOWNLOAD_TOKEN"),
    ({"env": {"SOMETHING": TOKEN}}, "env.SOMETHING"),
    ({"extra_args": ["--api-key", "s3cret-value"]}, "extra_args.1"),
    ({"extra_args": ["--hf-token=s3cret-value"]}, "extra_args.0"),
    ({"extra_args": ["--model-url", f"https://huggingface.co/a/b/resolve/main/x.gguf?token={TOKEN}"]},
     "extra_args.1"),
    ({"description": f"ask me for {TOKEN}"}, "description"),
])
@pytest.mark.parametrize("command", [["render"], ["explain", "qwenlab"], ["check", "--no-lint"]])
def test_catalog_literal_secret_is_an_error_at_its_line(small_catalog, tmp_path, capsys, changes, field, command):
    app_file = edit_app(small_catalog, "qwenlab", **changes)
    before = snapshot(tmp_path)
    assert main([*command, "--catalog", str(small_catalog)]) == 1
    captured = capsys.readouterr()
    for secret in (TOKEN, "s3cret-value", "plain-literal-value"):
        assert secret not in captured.out + captured.err
    line = next(n for n, text in enumerate(app_file.read_text().splitlines(), 1)
                if field.split(".")[0] + ":" in text)
    assert "qwenlab.yaml:" in captured.err and f": {field}: " in captured.err
    assert "OLARES_USER_HUGGINGFACE_TOKEN" in captured.err and "Kubernetes Secret" in captured.err
    assert int(captured.err.split("qwenlab.yaml:")[1].split(":")[0]) >= line
    assert snapshot(tmp_path) == before  # no chart, no values.yaml with the token


def test_catalog_secret_rule_sec001_checks_the_engine_argv_and_env(small_catalog):
    cat = load_catalog(small_catalog)
    clean = cat.apps["qwenlab"]
    assert list(no_literal_secret(context(clean, cat))) == []
    leaked = dataclasses.replace(clean, app=clean.app.model_copy(update={"env": {"HF_TOKEN": TOKEN},
                                                                         "extra_args": ("--api-key", "x1")}))
    findings = list(no_literal_secret(context(leaked, cat)))
    assert {f.rule for f in findings} == {"SEC001"} and len(findings) == 2
    assert all(TOKEN not in f.message and "x1" not in f.message for f in findings)
    assert all("OLARES_USER_HUGGINGFACE_TOKEN" in f.fix for f in findings)


def test_catalog_duplicate_key_names_both_lines(small_catalog, capsys):
    app_file = small_catalog / "apps" / "qwenlab.yaml"
    text = app_file.read_text()
    app_file.write_text(text + "title: A second title\n")
    first = next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith("title:"))
    last = len(text.splitlines()) + 1
    assert main(["render", "--catalog", str(small_catalog)]) == 1
    err = capsys.readouterr().err
    assert f"qwenlab.yaml:{last}:" in err and f"duplicate key 'title' (line {first} and line {last})" in err


def test_import_duplicate_metadata_in_a_chart_manifest_refused(small_catalog, tmp_path, capsys):
    import sys

    from support.adversarial import REPO
    sys.path.insert(0, str(REPO / "tests" / "importer"))
    import olares_charts as oc

    chart = oc.llamacpp_chart(tmp_path / "in")
    manifest = chart / "OlaresManifest.yaml"
    manifest.write_text(manifest.read_text() + "metadata:\n  name: other\n")
    assert main(["import", str(chart), "--catalog", str(small_catalog)]) == 1
    err = capsys.readouterr().err
    assert "OlaresManifest.yaml:" in err and "duplicate key 'metadata' (line 4 and line" in err
    assert not (small_catalog / "apps" / "marketqwen.yaml").exists()


def test_a_count_of_tokens_is_not_a_secret_name():
    """`--speculative-config.num_speculative_token 2` is a number (a misspelt key FLAG rules catch), not a secret."""
    from generator.core.redact import secret_name

    assert not secret_name("--speculative-config.num_speculative_token")
    assert not secret_name("MAX_TOKEN") and not secret_name("--n-draft-token")
    assert secret_name("HF_TOKEN") and secret_name("--hf-token") and secret_name("--config.api_key")
