"""`catalog smoke APP --local` (generator/smoke/local.py): the real smoke against a REAL llama-server booted here on
a tiny model shaped like the app, a PASS without a GPU; the package's own GGUF writer (generator/smoke/tinygguf.py,
standard library only) against gguf-py's; what cannot run locally is refused with what to do instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.cli import main
from generator.smoke import tinygguf
from generator.smoke.local import local_target
from support.smoke import run_json

UPSTREAM = "llamacppqwen36a3bone"  # llama.cpp server-cuda13-b8740: the image carries a build number
SPECULATIVE = "llamacppqwen36mtpone"  # MTP, 5 draft tokens


def test_the_package_writes_the_file_the_tests_writer_writes_through_gguf_py(tmp_path):
    """Same keys with the same types and values, same tensors with the same shapes and types, same size, the
    same bias column; read back by gguf-py's own GGUFReader."""
    import gguf
    import numpy as np
    from support import tinygguf as reference

    ours = gguf.GGUFReader(str(tinygguf.write(tmp_path / "ours.gguf")))
    theirs = gguf.GGUFReader(str(reference.write(tmp_path / "theirs.gguf", never_eos=True, text_only=True)))
    assert ours.fields.keys() == theirs.fields.keys()
    for key, field in theirs.fields.items():
        assert ours.fields[key].types == field.types, key
        if not key.startswith("GGUF."):
            assert ours.fields[key].contents() == field.contents(), key
    assert [(t.name, tuple(t.shape), t.tensor_type) for t in ours.tensors] == [
        (t.name, tuple(t.shape), t.tensor_type) for t in theirs.tensors]
    out = {t.name: t.data for t in ours.tensors}
    ref = {t.name: t.data for t in theirs.tensors}
    assert np.array_equal(out["output.weight"][:, 0], ref["output.weight"][:, 0])
    assert abs(float(np.std(out["blk.0.attn_q.weight"])) - 0.02) < 0.002
    assert (tmp_path / "ours.gguf").stat().st_size == (tmp_path / "theirs.gguf").stat().st_size


@pytest.mark.parametrize("app, engine", [("vllmqwen36dense27bone", "vllm"), ("vllmqwen36turbo27bone", "vllm")])
def test_an_app_that_is_not_llama_cpp_is_refused_with_what_to_do(app, engine, catalog_copy, capsys):
    assert main(["smoke", app, "--local", "--catalog", str(catalog_copy)]) == 2
    err = capsys.readouterr().err
    assert f"runs on {engine}" in err and "only llama.cpp-family apps can be smoked locally" in err
    assert "--endpoint URL" in err


def test_no_llama_server_says_how_to_get_one(catalog_copy, capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("LLAMA_SERVER", raising=False)
    monkeypatch.setenv("CATALOG_CACHE", str(tmp_path / "empty-cache"))
    assert main(["smoke", UPSTREAM, "--local", "--catalog", str(catalog_copy)]) == 2
    err = capsys.readouterr().err
    from generator.adapters.llama import BUILD_COMMAND, BUILD_COST  # the one command that builds it (issue 42)

    assert "no llama-server" in err and f"`{BUILD_COMMAND}`" in err and BUILD_COST in err and "LLAMA_SERVER" in err


def test_local_takes_no_endpoint_and_records_nothing(catalog_copy, capsys):
    assert main(["smoke", UPSTREAM, "--local", "--endpoint", "http://127.0.0.1:1", "--catalog",
                 str(catalog_copy)]) == 2
    assert "--local runs its own server" in capsys.readouterr().err


def test_the_local_build_stands_in_for_the_image_build_with_a_note(catalog_copy):
    resolved = load_catalog(catalog_copy).apps[UPSTREAM]
    same, notes = local_target(resolved, "b8740-3f7c1d2")
    assert notes == [] and same.expected is not None and same.expected.engine_version == "b8740"
    other, notes = local_target(resolved, "b11434-unknown")
    assert other.expected is not None and other.expected.engine_version is None
    assert notes == ["local run: llama-server b11434-unknown (built from the sdist) stands in for b8740 of "
                     "ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740; engine version not compared"]


def _local(catalog: Path, app: str, capsys) -> tuple[int, dict]:
    return run_json(["smoke", app, "--local", "--catalog", str(catalog), "--runs", "2", "--max-tokens", "48",
                     "--timeout", "120"], capsys)


@pytest.mark.needs_llama_server
def test_a_local_smoke_passes_with_the_app_s_identity_and_records_nothing(catalog_copy, capsys):
    code, out = _local(catalog_copy, UPSTREAM, capsys)
    assert code == 0 and out["verdict"] == "pass", out
    assert {"engine", "model", "context"} <= set(out["identity_matched"])
    weight = load_catalog(catalog_copy).apps[UPSTREAM]
    assert out["identity"]["model_path"].endswith("/" + weight.model.weight(weight.app.quantization).file)
    assert out["endpoint"].startswith("local llama-server b") and out["baseline"] is None
    assert any(n.startswith("local run: a tiny random model") for n in out["notes"])
    assert not (catalog_copy / "ledger").exists()


@pytest.mark.needs_llama_server
def test_a_speculative_app_runs_with_a_stand_in_drafter_and_says_so(catalog_copy, capsys):
    code, out = _local(catalog_copy, SPECULATIVE, capsys)
    assert code == 0 and out["verdict"] == "pass", out
    assert not any("speculation is off" in r for r in out["reasons"])
    assert out["acceptance"] is not None
    assert any("tiny draft model (--spec-type draft-simple)" in n for n in out["notes"])
    assert not (catalog_copy / "ledger").exists()
