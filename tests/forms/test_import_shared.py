"""Import of the shared-app layout (issue 38 item 5, issue 39 item 5): a store in the second public store's layout
(tests/forms/shared_store.py writes it) and the shared charts this project renders, read back as their apps.

Real parts: copies of tests/fixtures/catalog_small, the real importer through the CLI and the real Helm engine, the
real renderer and `catalog check` (rules and chart lint).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.cli import main
from generator.yamlio.loader import read_document

from shared_store import shared_chart, shared_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SMALL = FIXTURES / "catalog_small"
TABLE = FIXTURES / "market" / "catalog" / "flags" / "llamacpp-b8740.yaml"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """catalog_small with its llama.cpp stack's flag table (so `check` can read the argv) and market categories."""
    dest = tmp_path / "catalog"
    shutil.copytree(SMALL, dest)
    (dest / "flags").mkdir(exist_ok=True)
    shutil.copy(TABLE, dest / "flags")
    stack = dest / "stacks" / "llamacpp-b8740.yaml"
    stack.write_text(stack.read_text().replace("\nport: 8080\n", "\nport: 8080\nflag_table: llamacpp-b8740\n"))
    (dest / "market.yaml").write_text("categories: true\n")
    return dest


def imported(capsys, catalog: Path, *paths: Path) -> dict:
    code = main(["import", *map(str, paths), "--catalog", str(catalog), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    return {r["name"]: r for r in out["apps"]}


def app_data(catalog: Path, name: str, folder: str = "apps") -> dict:
    return read_document(catalog / folder / f"{name}.yaml").data


def test_a_store_of_shared_apps_imports_active_apps_and_a_draft(capsys, catalog, tmp_path):
    results = imported(capsys, catalog, shared_store(tmp_path))
    assert {n: r["status"] for n, r in results.items()} == {"sharedqwen": "ok", "sharedspark": "ok",
                                                            "sharedbuild": "draft", "sharedhelm": "ok"}
    assert results["sharedbuild"]["missing"][0] == "builds llama.cpp from git at start: pin an image"
    app = app_data(catalog, "sharedqwen")
    assert app["form"] == "shared" and list(app["categories"]) == ["LLM Chat", "AI Agents"]
    assert app["title"] == "Qwen36 A3B Shared"  # the Market's title characters (OLARES021)
    notes = results["sharedqwen"]["notes"]
    assert any("title 'Qwen3.6 A3B (Shared)' -> 'Qwen36 A3B Shared'" in n for n in notes)
    gpu = next(n for n in notes if n.startswith("GPU memory:"))
    assert "no HAMi limit" in gpu and "1Gi to 24Gi" in gpu and "caps 23,000 MiB" in gpu
    assert re.search(r"the fit sizes it at [0-9,]+ MiB \(need [0-9,]+ \+ margin [0-9,]+\)", gpu)  # as FIT002 says
    assert "CUDA_DEVICE_MEMORY_LIMIT_0 30,000 MiB is above the 24,564 MiB card, no cap" in gpu  # upstream's belt
    assert app["gpu_memory_mib"] == 23000  # the usable most of the card, as upstream let the app use it all
    assert not any("LLM_" in line or "sharedentrances" in line for line in app.get("unmapped", ()))
    assert app_data(catalog, "sharedbuild", "drafts/apps")["form"] == "shared"

    helm_app = app_data(catalog, "sharedhelm")  # the settings empty: the chart's defaults, no setting's flag
    assert helm_app["context_length"] == 32768 and "--n-predict" not in helm_app.get("extra_args", ())
    assert "--api-key" not in helm_app.get("extra_args", ()) and helm_app["form"] == "shared"

    code = main(["check", "sharedqwen", "sharedspark", "sharedhelm", "--catalog", str(catalog), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, [f for a in report["apps"] for f in a["findings"] if f["severity"] == "error"]


def test_an_accelerator_mode_other_than_nvidia_is_carried(capsys, catalog, tmp_path):
    results = imported(capsys, catalog, shared_store(tmp_path) / "sharedspark")
    assert any("nvidia-gb10" in line for line in results["sharedspark"]["unmapped"])  # no such device: said
    shutil.rmtree(catalog / "apps")
    shutil.copytree(SMALL / "apps", catalog / "apps")
    shutil.copy(Path(__file__).resolve().parents[2] / "catalog" / "devices" / "dgx-spark.yaml", catalog / "devices")
    results = imported(capsys, catalog, tmp_path / "store" / "sharedspark")
    assert [dict(d) for d in app_data(catalog, "sharedspark")["devices"]] == [{"device": "dgx-spark"}]
    assert any("nvidia-gb10 carried as devices: dgx-spark" in n for n in results["sharedspark"]["notes"])


@pytest.mark.parametrize("app", ["qwenlab", "gemmalab"])
def test_a_shared_chart_we_render_round_trips_through_import(capsys, tmp_path, app):
    source = tmp_path / "source"
    shutil.copytree(SMALL, source)
    (source / "market.yaml").write_text("form: shared\n")
    assert main(["render", "--catalog", str(source), "--out", str(tmp_path / "charts")]) == 0
    capsys.readouterr()
    target = tmp_path / "target"
    shutil.copytree(source, target)
    for path in (target / "apps").glob("*.yaml"):
        path.unlink()
    results = imported(capsys, target, tmp_path / "charts" / app)
    assert results[app]["status"] == "ok" and results[app]["unmapped"] == []
    before, after = load_catalog(source).apps[app].app, load_catalog(target).apps[app].app
    fields = ("model", "quantization", "stack", "context_length", "served_name", "kv_cache_type", "extra_args",
              "env", "title", "description", "icon", "version", "form")
    assert {f: getattr(after, f) for f in fields} == {f: getattr(before, f) for f in fields}
    assert main(["render", "--catalog", str(target), "--out", str(tmp_path / "again"), app]) == 0
    again = {p.relative_to(tmp_path / "again" / app): p.read_bytes() for p in (tmp_path / "again" / app).rglob("*")
             if p.is_file()}
    first = {p.relative_to(tmp_path / "charts" / app): p.read_bytes() for p in (tmp_path / "charts" / app).rglob("*")
             if p.is_file()}
    assert again == first  # the imported app renders the same shared chart, byte for byte


def test_the_settings_do_not_become_app_env(capsys, catalog, tmp_path):
    imported(capsys, catalog, shared_store(tmp_path) / "sharedqwen")
    assert not any(k.startswith("LLM_") for k in app_data(catalog, "sharedqwen").get("env", {}))


def test_a_launcher_that_tees_its_log_imports_like_one_that_execs(capsys, catalog, tmp_path):
    """The newer launcher shape of the second store: no `exec`, the server's output `2>&1 | tee -a "$LOGFILE"`, the
    settings' array first on that line. The array's removal keeps the line's indentation (the YAML block scalar
    stays whole) and the redirection is no part of the argv."""
    store = tmp_path / "store"
    shared_chart(store, "sharedtee", tee=True)
    shared_chart(store, "sharedqwen")
    results = imported(capsys, catalog, store / "sharedtee", store / "sharedqwen")
    assert results["sharedtee"]["status"] == "ok", results["sharedtee"]
    tee, plain = app_data(catalog, "sharedtee"), app_data(catalog, "sharedqwen")
    for key in ("stack", "model", "context_length", "extra_args", "form"):
        assert tee.get(key) == plain.get(key), key
    assert not any("2>&1" in str(a) or a == "tee" for a in tee.get("extra_args", ()))


def test_a_flag_array_no_setting_feeds_is_not_dropped(capsys, catalog, tmp_path):
    """`REASONING_ARGS=(--reasoning on)` carries the launcher's own flags: dropping it as the settings' array would
    lose `--reasoning on` silently; it is read as the flags it holds."""
    store = tmp_path / "store"
    shared_chart(store, "sharedown", own_array=True)
    results = imported(capsys, catalog, store / "sharedown")
    assert not any("flag array REASONING_ARGS" in n for n in results["sharedown"]["notes"])
    args = list(app_data(catalog, "sharedown").get("extra_args", ()))
    assert args[args.index("--reasoning"):][:2] == ["--reasoning", "on"]


def test_a_clone_whose_url_a_variable_holds_is_a_build_at_start(capsys, catalog, tmp_path):
    """`REPO_URL="https://github.com/PrismML-Eng/llama.cpp"` then `git clone "$REPO_URL"`: the same one reason as a
    clone of a written URL."""
    results = imported(capsys, catalog, shared_chart(tmp_path / "store", "sharedfork", builds_var=True))
    assert results["sharedfork"]["status"] == "draft"
    assert results["sharedfork"]["missing"][0] == "builds llama.cpp from git at start: pin an image"
    assert not any(m.startswith("the launcher builds the engine") for m in results["sharedfork"]["missing"])  # once


def test_an_unsupported_shared_app_is_not_told_its_settings_are_undeclared(capsys, catalog, tmp_path):
    """The import reads the manifest without the settings' envs (the form declares them again): a chart it leaves
    out (a Python server) must not be told the manifest declares no LLM_CONTEXT_WINDOW, which it does."""
    folder = shared_chart(tmp_path / "store", "sharedpy", python=True)
    code = main(["import", str(folder), "--catalog", str(catalog), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 3 and [r["status"] for r in out["apps"]] == ["unsupported"]
    assert "declares no env" not in json.dumps(out)


def test_an_in_container_cap_below_the_card_is_the_gpu_memory_kept(capsys, catalog, tmp_path):
    """Upstream's pod asks a whole GPU but caps it inside the container (CUDA_DEVICE_MEMORY_LIMIT_0 20000m, below
    the 24,564 MiB card): the app keeps that cap, and the note does not say upstream let it use the whole card."""
    results = imported(capsys, catalog, shared_chart(tmp_path / "store", "sharedcap", hami="20000m"))
    assert app_data(catalog, "sharedcap")["gpu_memory_mib"] == 20000
    gpu = next(n for n in results["sharedcap"]["notes"] if n.startswith("GPU memory:"))
    assert "capped it in the container (CUDA_DEVICE_MEMORY_LIMIT_0 20,000 MiB)" in gpu and "caps 20,000 MiB" in gpu
    assert "whole card" not in gpu


def test_a_manifest_limit_below_the_card_is_not_called_the_whole_card(capsys, catalog, tmp_path):
    """The second store's sglangminicpm51bone asks `limitedGPUMemory: 8Gi` with no HAMi limit in the pod: the app
    is capped at those 8,192 MiB, and the note says where that number comes from."""
    results = imported(capsys, catalog, shared_chart(tmp_path / "store", "sharedsmall", limited_gpu="8Gi",
                                                     hami=None))
    gpu = next(n for n in results["sharedsmall"]["notes"] if n.startswith("GPU memory:"))
    assert app_data(catalog, "sharedsmall")["gpu_memory_mib"] == 8192
    assert "caps 8,192 MiB, upstream's limitedGPUMemory 8Gi" in gpu and "whole card" not in gpu



def test_a_vllm_download_dir_on_a_volume_not_rendered_is_left_out(capsys, catalog, tmp_path):
    """`--download-dir /shared-models/llms/huggingface` on the chart's hostPath (the second store's
    nemotronlabselastic30bnvfp4one): the re-render mounts no such volume, so the flag is left out (vLLM then
    downloads into its Hugging Face cache, HF_HOME=/models) and said in `unmapped`."""
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts"), "gemmalab"]) == 0
    capsys.readouterr()
    chart = tmp_path / "charts" / "gemmalab"
    values = chart / "values.yaml"
    text = values.read_text()
    assert "  args:\n" in text
    values.write_text(text.replace("  args:\n", "  args:\n  - --download-dir\n  - /shared-models/hf\n", 1))
    deployment = chart / "templates" / "deployment.yaml"
    dep = deployment.read_text()
    volume = ("        - name: shared-models\n          hostPath:\n            path: /olares/share/ai/model\n"
              "            type: DirectoryOrCreate\n")
    assert "      volumes:\n" in dep and "          volumeMounts:\n" in dep
    dep = dep.replace("      volumes:\n", "      volumes:\n" + volume, 1)
    dep = dep.rsplit("          volumeMounts:\n", 1)
    deployment.write_text(dep[0] + "          volumeMounts:\n            - name: shared-models\n"
                          "              mountPath: /shared-models\n" + dep[1])
    (catalog / "apps" / "gemmalab.yaml").unlink()
    results = imported(capsys, catalog, chart)
    folder = "apps" if results["gemmalab"]["status"] == "ok" else "drafts/apps"
    assert "--download-dir" not in app_data(catalog, "gemmalab", folder).get("extra_args", ())
    assert any("--download-dir /shared-models/hf" in u and "HF_HOME=/models" in u
               for u in results["gemmalab"]["unmapped"])


def test_a_model_the_launcher_downloads_through_a_function_of_its_own_is_found(capsys, catalog, tmp_path):
    """The second store's newer launchers download with a helper, `download URL DEST LABEL MIN_BYTES` (curl inside
    the function, resuming a `.part`): the call names the Hugging Face file and where it goes, so the model is
    found as with a bare curl line, not reported as coming from outside the chart."""
    store = tmp_path / "store"
    shared_chart(store, "sharedhelper", helper=True)
    shared_chart(store, "sharedqwen")
    results = imported(capsys, catalog, store / "sharedhelper", store / "sharedqwen")
    assert results["sharedhelper"]["status"] == "ok", results["sharedhelper"]["missing"]
    helper, plain = app_data(catalog, "sharedhelper"), app_data(catalog, "sharedqwen")
    for key in ("model", "quantization", "stack", "context_length", "extra_args"):
        assert helper.get(key) == plain.get(key), key
    assert any("Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf is downloaded by the launcher script" in n
               for n in results["sharedhelper"]["notes"])


def test_a_draft_names_the_chart_it_came_from_without_a_path_of_this_machine(capsys, catalog, tmp_path_factory):
    """A draft's reasons quote an origin (`(<chart>/templates/server.yaml:N)`): given a chart by its absolute path
    outside the catalog's repository, the draft file says the chart's name, not this machine's folder (which `check`
    refuses, PATH001)."""
    folder = shared_chart(tmp_path_factory.mktemp("upstream"), "sharedtpl",
                          extra=("--chat-template-file", "/models/chat_template.jinja"))
    code = main(["import", str(folder), "--catalog", str(catalog), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["apps"][0]["status"] == "draft", out["apps"][0]["missing"]
    text = (catalog / "drafts" / "apps" / "sharedtpl.yaml").read_text()
    assert "--chat-template-file /models/chat_template.jinja (sharedtpl/templates/server.yaml:" in text
    assert str(folder.parent) not in text


def test_the_app_file_carries_what_differs_from_upstream(capsys, catalog, tmp_path):
    """The title fixed for the Market, the categories and upstream's GPU-memory meaning are notes on the app file
    itself (its header), not only in the import's report; a line of `unmapped` quoting the title the catalog renders
    quotes the title it now renders."""
    folder = shared_chart(tmp_path / "store", "sharednotes", entrance_title="Qwen A3B One")
    results = imported(capsys, catalog, folder)
    text = (catalog / "apps" / "sharednotes.yaml").read_text()
    header = [line for line in text.splitlines() if line.startswith("# note: ")]
    assert any("title 'Qwen3.6 A3B (Shared)' -> 'Qwen36 A3B Shared'" in line for line in header)
    assert any(line.startswith("# note: GPU memory: upstream set no HAMi limit") and "caps 23,000 MiB" in line
               for line in header)
    assert any(line.startswith("# note: categories ") for line in header)
    entrance = [u for u in results["sharednotes"]["unmapped"] if "entrances[0].title" in u]
    assert entrance and entrance[0].endswith("'Qwen A3B One' (the catalog renders 'Qwen36 A3B Shared')")
    assert read_document(catalog / "apps" / "sharednotes.yaml").data["title"] == "Qwen36 A3B Shared"


def test_a_measured_speed_in_the_manifest_does_not_break_the_json_report(capsys, catalog, tmp_path):
    """A chart whose manifest carries a `metadata.bento` hero speed (the second store's vllmgemma4e4bone, `178 t/s`)
    imports a benchmark dated the day it was read; `--json` writes that date as ISO text (it crashed: a date is not
    JSON)."""
    folder = shared_chart(tmp_path / "store", "sharedbento")
    manifest = folder / "OlaresManifest.yaml"
    bento = "  bento:\n    hero:\n      value: 178 t/s\n      label: speed\n"
    manifest.write_text(manifest.read_text().replace("  categories:\n", bento + "  categories:\n", 1))
    results = imported(capsys, catalog, folder)
    bench = results["sharedbento"]["app"]["benchmarks"][0]
    assert bench["tokens_per_s"] == 178.0 and re.fullmatch(r"\d{4}-\d\d-\d\d", bench["date"])


def test_a_flag_a_setting_picks_is_read_as_olares_installs_it(capsys, catalog, tmp_path):
    """The second store's reasoning setting: `LLM_REASONING` (editable, no default: empty when Olares installs the
    app) lowercased and matched in a `case` that fills `REASONING_ARGS`. The import reads the branch that runs at
    install (`*) --reasoning on`), not a refusal, and says the setting is not rendered again."""
    results = imported(capsys, catalog, shared_chart(tmp_path / "store", "sharedthink", reasoning=True))
    assert results["sharedthink"]["status"] == "ok", results["sharedthink"]["missing"]
    args = list(app_data(catalog, "sharedthink").get("extra_args", ()))
    assert args[args.index("--reasoning"):][:2] == ["--reasoning", "on"]
    said = [u for u in results["sharedthink"]["unmapped"] if "LLM_REASONING" in u]
    assert len(said) == 1 and "empty when Olares installs the app" in said[0] and "not rendered by `form: shared`" \
        in said[0] and re.match(r"\S*sharedthink/OlaresManifest\.yaml:\d+: settings LLM_REASONING ", said[0])
    assert "LLM_REASONING" not in app_data(catalog, "sharedthink").get("env", {})  # not an app env set to empty


def test_a_command_substitution_in_the_launcher_is_the_shells_not_an_undefined_variable(capsys, catalog, tmp_path):
    """`echo "... host=$(hostname)"` in a `bash -c` launcher (the second store's sndrqwen3627bone): Kubernetes passes
    a `$(name)` that names no env var as written, and bash runs it; the import does not refuse the chart for it."""
    folder = shared_chart(tmp_path / "store", "sharedhost")
    server = folder / "templates" / "server.yaml"
    server.write_text(server.read_text().replace("              set -e\n",
                                                 '              set -e\n              echo "boot host=$(hostname)"\n', 1))
    results = imported(capsys, catalog, folder)
    assert results["sharedhost"]["status"] == "ok", results["sharedhost"]


def test_two_drafts_of_one_long_image_get_distinct_ids(capsys, catalog, tmp_path):
    """Two apps on an image the catalog lacks, on different ports, draft two stacks; the image's id is already at the
    63-character limit (the second store's sndr apps run `vllm/vllm-openai@sha256:...`), and the second draft's id
    still differs (its `-imported` suffix was cut away again and the import looped for ever)."""
    image = "ghcr.io/example/llama-cpp-fork:" + "a1b2c3d4e5" * 7
    store = tmp_path / "store"
    shared_chart(store, "sharedlongone", image=image, port=8080)
    shared_chart(store, "sharedlongtwo", image=image, port=8000)
    results = imported(capsys, catalog, store / "sharedlongone", store / "sharedlongtwo")
    one, two = results["sharedlongone"]["stack"], results["sharedlongtwo"]["stack"]
    assert one != two and len(one) <= 63 and len(two) <= 63 and two.endswith("-imported")


def test_a_clone_of_a_branch_names_the_repository_not_the_branch(capsys, catalog, tmp_path):
    """`git clone --branch "$REPO_BRANCH" --single-branch "$REPO_URL" "$REPO_DIR"` (the second store's
    llamacpplagunas21one, llamacppnanbeige423bone): the repository is the variable set to a GitHub URL, and the draft
    states the one reason."""
    folder = shared_chart(tmp_path / "store", "sharedbranch", builds_var=True)
    server = folder / "templates" / "server.yaml"
    server.write_text(server.read_text().replace('git clone "$REPO_URL"',
                                                 'REPO_BRANCH=b9000\n              git clone --branch "$REPO_BRANCH" '
                                                 '--single-branch "$REPO_URL"', 1))
    results = imported(capsys, catalog, folder)
    assert results["sharedbranch"]["status"] == "draft"
    assert results["sharedbranch"]["missing"][0] == "builds llama.cpp from git at start: pin an image"


def test_a_build_from_a_source_archive_states_the_one_reason(capsys, catalog, tmp_path):
    """A launcher that downloads llama.cpp's source archive (`codeload.github.com/ggml-org/llama.cpp/tar.gz/REF`)
    and builds it (the second store's llamacppdsv4flash0731one): the same one reason as a clone, not the generic
    line quoting the launcher's log messages."""
    folder = shared_chart(tmp_path / "store", "sharedtar", builds=True)
    server = folder / "templates" / "server.yaml"
    server.write_text(server.read_text().replace(
        "git clone --depth 1 https://github.com/ggml-org/llama.cpp /opt/llama.cpp",
        'curl -fL "https://codeload.github.com/ggml-org/llama.cpp/tar.gz/b9000" -o /tmp/src.tgz\n'
        "              mkdir -p /opt/llama.cpp && tar -xzf /tmp/src.tgz -C /opt/llama.cpp --strip-components=1", 1))
    results = imported(capsys, catalog, folder)
    assert results["sharedtar"]["status"] == "draft"
    assert results["sharedtar"]["missing"][0] == "builds llama.cpp from git at start: pin an image"
    assert not any(m.startswith("the launcher builds the engine") for m in results["sharedtar"]["missing"])


def test_a_model_the_chart_does_not_download_is_one_reason(capsys, catalog, tmp_path):
    """A model file from outside the chart (the second store's llamacpplagunas21one picks its file with `eval`): the
    draft says the model is unknown once, not also a bare `quantization` (the weight of that unknown model)."""
    folder = shared_chart(tmp_path / "store", "sharednomodel")
    server = folder / "templates" / "server.yaml"
    text = server.read_text()
    start = text.index('              if [ ! -f "$SHARED_DIR/$TARGET_FILE" ]; then')
    server.write_text(text[:start] + text[text.index("              fi\n", start) + len("              fi\n"):])
    results = imported(capsys, catalog, folder)
    missing = results["sharednomodel"]["missing"]
    assert any(m.startswith("model: /shared-models/llms/") for m in missing) and "quantization" not in missing
