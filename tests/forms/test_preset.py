"""`catalog preset`: the env values for Olares' own engine bases, validated against a base manifest's envs.

Real parts: copies of the market fixture's catalog and flag tables, the real planner, the fit and the CLI. The base
files are fixtures the tests write in the shape of catalog/bases/ (the envs of an engine base's OlaresManifest.yaml:
envName, required, options, regex; the image it pins and its flag table).
"""

from __future__ import annotations

import json
import re

import pytest

from generator.catalog import load_catalog
from generator.cli import main
from generator.core.errors import UsageError
from generator.flags.tables import FlagTables
from generator.preset.bases import load_base
from generator.preset.build import build_preset, validate

from support.checks import A3B, E2B, E4B, set_app

ENVS = """envs:
  - envName: MODEL_SOURCE
    required: true
    regex: "{source_regex}"
  - envName: MODEL_NAME
    required: true
  - envName: MODEL_MODE
    required: true
    options: [{{title: Chat, value: chat}}, {{title: Embedding, value: embedding}}]
  - envName: MODEL_SUPPORTS
    required: true
    default: ""
    multiSelect: true
    splitter: ","
    options: [{{title: Vision, value: vision}}, {{title: Tools, value: tools}}, {{title: Thinking, value: thinking}},
              {{title: None, value: none}}]
  - envName: ENGINE_ARGS
    required: true
    default: ""
  - envName: {gpu}
    required: true
    regex: "^[0-9]+(Gi|Mi)?$"
"""


def write_base(catalog, name: str, engine: str, table: str, gpu: str, drops: str, source_regex: str = "^hf://"):
    (catalog / "bases").mkdir(exist_ok=True)
    (catalog / "bases" / f"{name}.yaml").write_text(
        f"id: {name}\nengine: {engine}\nversion: '1.0.0'\nimage: docker.io/example/{engine}:pinned\n"
        f"flag_table: {table}\ngpu_memory_env: {gpu}\ndrops: {drops}\nsource: a fixture written by the test\n"
        + ENVS.format(source_regex=source_regex, gpu=gpu), encoding="utf-8")


@pytest.fixture
def bases(catalog_copy):
    write_base(catalog_copy, "llamacppllmbasev3", "llamacpp", "llamacpp-b8740", "LLAMACPP_REQUIRED_GPU_MEMORY",
               "[-hf, --alias, --host, --port, --metrics, --model]")
    write_base(catalog_copy, "vllmllmbasev3", "vllm", "vllm-0-19-1", "VLLM_REQUIRED_GPU_MEMORY",
               "[--model, --served-model-name, --host, --port]")
    return catalog_copy


def preset_of(catalog, app: str, base: str, device: str | None = None):
    cat = load_catalog(catalog)
    b = load_base(cat.root, base)
    return build_preset(cat.apps[app], b, FlagTables(cat.root).get(b.flag_table), device)


def test_llamacpp_preset_carries_the_fit_sized_context_and_is_accepted(bases):
    p = preset_of(bases, A3B, "llamacppllmbasev3")
    env = dict(p.env)
    r = load_catalog(bases).apps[A3B]
    assert p.ok and p.problems == ()
    assert env["MODEL_SOURCE"].startswith("hf://") and "--include" in env["MODEL_SOURCE"]
    assert re.fullmatch(r"[^/:]+/[^/:]+:[A-Za-z0-9_-]+", env["MODEL_NAME"])
    args = env["ENGINE_ARGS"].split()
    assert args[args.index("--ctx-size") + 1] == str(r.app.context_length)
    assert args[args.index("--parallel") + 1] == "1"  # the slot count is explicit
    assert "--model" not in args and "--host" not in args and "--alias" not in args  # the base passes them
    assert re.fullmatch(r"\d+Mi", env["LLAMACPP_REQUIRED_GPU_MEMORY"])
    assert all(" " not in a for a in args)


def test_a_value_the_bases_regex_refuses_is_reported(bases):
    write_base(bases, "llamacppllmbasev3", "llamacpp", "llamacpp-b8740", "LLAMACPP_REQUIRED_GPU_MEMORY", "[]",
               source_regex="^s3://")
    p = preset_of(bases, A3B, "llamacppllmbasev3")
    assert not p.ok and any(x.startswith("MODEL_SOURCE:") and "^s3://" in x for x in p.problems)


def test_flags_the_bases_image_lacks_are_left_out_with_the_reason(bases):
    set_app(bases, A3B, extra_args=["--batch-size", "2048", "--no-such-flag-anywhere", "--op-offload"])
    p = preset_of(bases, A3B, "llamacppllmbasev3")
    assert "--no-such-flag-anywhere" not in dict(p.env)["ENGINE_ARGS"]
    assert any(d.tokens[0] == "--no-such-flag-anywhere" and "does not take" in d.why for d in p.dropped)


def test_a_base_of_another_engine_family_is_a_usage_error(bases):
    with pytest.raises(UsageError) as err:
        preset_of(bases, E4B, "llamacppllmbasev3")
    assert "vllm" in str(err.value) and "--base vllmllmbasev3" in str(err.value)


def test_a_fork_the_base_does_not_run_gets_one_reason(bases):
    p = preset_of(bases, E2B, "llamacppllmbasev3")
    assert not p.ok and p.env == () and "atomic" in p.reason and "\n" not in p.reason


def test_validate_reads_options_and_required():
    from generator.preset.bases import Base, BaseEnv, EnvOption

    base = Base(id="x", engine="vllm", version="1", image="i:1", gpu_memory_env="VLLM_REQUIRED_GPU_MEMORY",
                source="a test base", envs=(BaseEnv(envName="MODEL_SUPPORTS", required=True, multiSelect=True,
                                                    splitter=",", options=(EnvOption(title="T", value="tools"),)),
                                            BaseEnv(envName="MODEL_NAME", required=True)))
    assert validate(base, {"MODEL_SUPPORTS": "tools", "MODEL_NAME": "a/b"}) == []
    assert validate(base, {"MODEL_SUPPORTS": "tools,wings"}) == ["MODEL_SUPPORTS: wings not among tools",
                                                                 "MODEL_NAME: required, not set"]


def test_cli_json_and_exit_codes(bases, capsys):
    assert main(["preset", A3B, "--catalog", str(bases), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["base"] == "llamacppllmbasev3" and "--ctx-size" in data["env"]["ENGINE_ARGS"]
    assert main(["preset", E2B, "--catalog", str(bases), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reason"]
    assert main(["preset", E4B, "--base", "llamacppllmbasev3", "--catalog", str(bases)]) == 2
    assert "vllm" in capsys.readouterr().err


def test_a_store_without_bases_reads_the_tools_own(catalog_copy, capsys):
    """`catalog init` copies no bases/: the embedded catalog's (the platform's facts) answer."""
    assert not (catalog_copy / "bases").exists()
    assert main(["preset", A3B, "--catalog", str(catalog_copy), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["base"] == "llamacppllmbasev3"
    assert not any("no flag table" in n for n in data["notes"])  # the embedded table of the base's image
