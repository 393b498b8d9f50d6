"""The semver level `catalog bump` infers from the kind of change, and the content hash it compares."""

from __future__ import annotations

from pathlib import Path

from generator.versions.diff import Change, diff_states, level_of
from generator.versions.releases import load_releases
from generator.versions.state import ReleaseState, content_hash, next_version, option_groups

from support.bump import run_cli
from support.catalogs import edit_app, edit_yaml

STATE = {
    "status": "active", "stack": "s", "engine": "vllm", "image": "img:1", "command": ["serve"],
    "model": {"id": "m", "quantization": "q4", "repo": "org/m", "revision": None}, "context": 88000,
    "args": ["org/m", "--max-model-len 88000", "--prefix-caching-hash-algo xxhash", "--max-num-seqs 1"],
    "env": {"GENESIS_ENABLE_P5B_KV": "1", "A": "1"}, "resources": {"requiredMemory": "24Gi"},
    "entrances": {"app": 8000}, "workloads": ["app"], "values_keys": ["engine.args", "engine.command"],
    "metadata": {"title": "T"}, "files": {},
}


OLD = ReleaseState.from_data(STATE)


def _with(**changes) -> ReleaseState:
    return ReleaseState.from_data({**STATE, **changes})


def test_the_fast_apps_history_reads_as_patch_lines() -> None:
    new = _with(context=131072, args=["org/m", "--max-model-len 131072", "--max-num-seqs 1"], env={"A": "1"})
    changes = diff_states(OLD, new, {"context": {"--max-model-len"}, "model": {"<positional>"}})
    assert [c.bullet for c in changes] == [
        "- Changed context 88000 -> 131072",
        "- Removed `--prefix-caching-hash-algo xxhash`",
        "- Removed env `GENESIS_ENABLE_P5B_KV=1`",
    ]
    assert level_of(changes) == "patch"


def test_minor_for_image_engine_model_quantization() -> None:
    for change in (dict(image="img:2"), dict(engine="llamacpp"),
                   dict(model={**STATE["model"], "quantization": "q8"}),
                   dict(model={**STATE["model"], "revision": "abc123"})):
        assert level_of(diff_states(OLD, _with(**change))) == "minor", change


def test_major_for_removed_or_renamed_entrance_workload_or_values_key() -> None:
    for change in (dict(entrances={"other": 8000}), dict(workloads=["other"]), dict(values_keys=["engine.args"])):
        changes = diff_states(OLD, _with(**change))
        assert level_of(changes) == "major", change
        assert any(c.verb == "Removed" for c in changes)
    added = diff_states(OLD, _with(values_keys=["engine.args", "engine.command", "engine.probe"]))
    assert level_of(added) == "minor" and added[0].bullet == "- Added values key `engine.probe`"


def test_patch_for_env_resources_metadata_and_other_files() -> None:
    assert level_of(diff_states(OLD, _with(env={**STATE["env"], "A": "2"}))) == "patch"
    assert level_of(diff_states(OLD, _with(resources={"requiredMemory": "28Gi"}))) == "patch"
    files = diff_states(_with(files={"templates/x.yaml": "sha256:a"}), _with(files={"templates/x.yaml": "sha256:b"}))
    assert [c.bullet for c in files] == ["- Changed chart files `templates/x.yaml`"]


def test_option_groups_and_next_version() -> None:
    assert option_groups(["m", "--a", "1", "--flag", "-c", "-1", "--j", "{}"]) == [
        ["m"], ["--a", "1"], ["--flag"], ["-c", "-1"], ["--j", "{}"]]
    assert [next_version("2.5.6", lvl) for lvl in ("patch", "minor", "major")] == ["2.5.7", "2.6.0", "3.0.0"]
    assert level_of([Change("Changed", "x", "patch"), Change("Removed", "y", "major")]) == "major"


def test_content_hash_reads_data_not_formatting() -> None:
    tree = {
        "Chart.yaml": "# header\napiVersion: v2\nname: a\nversion: 1.0.0\n",
        "OlaresManifest.yaml": "metadata:\n  name: a\n  version: 1.0.0\nspec:\n  upgradeDescription: x\n  a: 1\n",
        "values.yaml": "engine:\n  args:\n    - --x\n    - '1'\n",
        "templates/d.yaml": "kind: Deployment\nname: {{ .Release.Name }}\n",
    }
    same = {
        "Chart.yaml": "version: 9.9.9\nname: a\napiVersion: \"v2\"\n",
        "OlaresManifest.yaml": "spec: {a: 1, upgradeDescription: other}\nmetadata: {version: 2.0.0, name: a}\n",
        "values.yaml": "engine: {args: [--x, \"1\"]}  # flow style\n",
        "templates/d.yaml": "kind: Deployment   \r\nname: {{ .Release.Name }}\r\n",
    }
    assert content_hash(tree) == content_hash(same)
    for rel, text in (("values.yaml", "engine: {args: [--x, 1]}\n"),  # a number is not the string "1"
                      ("Chart.yaml", "apiVersion: v2\nname: b\nversion: 1.0.0\n"),
                      ("templates/d.yaml", "kind: StatefulSet\n")):
        assert content_hash({**tree, rel: text}) != content_hash(tree), rel


def test_stack_image_change_bumps_minor(capsys, recorded: Path) -> None:
    stack = recorded / "stacks" / "atomic-mtp.yaml"
    edit_yaml(stack, image="docker.io/aamsellem/llamacpp-atomic-mtp:0.1.1")
    code, out, err = run_cli(capsys, "bump", "--json", "--catalog", recorded)
    assert code == 0, err
    releases = load_releases(recorded)
    # both apps on the stack move to the next minor; the Fast app (other stack) stays
    assert releases.latest("gemma4e2bone").version == "1.1.0"
    assert releases.latest("gemma426ba4bone").version == "1.1.0"
    assert releases.latest("vllmqwen36turbo27bone").version == "2.5.6"
    assert "image `docker.io/aamsellem/llamacpp-atomic-mtp:0.1.0` -> `docker.io/aamsellem/llamacpp-atomic-mtp:0.1.1`" in out


def test_removed_values_key_bumps_major_and_level_overrides(capsys, recorded: Path) -> None:
    edit_yaml(recorded / "stacks" / "genesis-vllm.yaml", command=None)  # values key engine.command disappears
    code, out, _ = run_cli(capsys, "bump", "--check", "--catalog", recorded)
    assert code == 1
    code, out, err = run_cli(capsys, "bump", "--json", "--catalog", recorded)
    assert code == 0, err
    assert '"level": "major"' in out and "Removed values key `engine.command`" in out
    assert load_releases(recorded).latest("vllmqwen36turbo27bone").version == "3.0.0"
    edit_app(recorded, "gemma4e2bone", quantization="q8_0", context_length=65536)
    assert run_cli(capsys, "bump", "--level", "major", "--catalog", recorded)[0] == 0
    assert load_releases(recorded).latest("gemma4e2bone").version == "2.0.0"
