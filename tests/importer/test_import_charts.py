"""`catalog import` on charts written the way a hand-made market writes them (tests/importer/olares_charts.py):
manifest 0.10.0/v2 and 0.12.0/v3, folders and .tgz, admin/user branches, `$(VAR)` and launcher scripts,
`--update`, drafts, unsupported engines and every bad input (exit 1, nothing written).
"""

from __future__ import annotations

import json
from pathlib import Path

import olares_charts as oc
import pytest

from generator.catalog import load_catalog
from generator.cli import main
from generator.yamlio.loader import read_document


def run(catalog: Path, *args: str) -> int:
    return main(["import", *args, "--catalog", str(catalog)])


def report(catalog: Path, capsys, *args: str) -> tuple[int, dict]:
    code = run(catalog, *args, "--json")
    out = capsys.readouterr().out
    return code, json.loads(out)


def read_document_text(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "expected.yaml"
    path.write_text(text)
    return read_document(path).data


def app_data(catalog: Path, name: str, folder: str = "apps") -> dict:
    return read_document(catalog / folder / f"{name}.yaml").data


# --- the maintainer's shapes ----------------------------------------------------------------------------

def test_v2_chart_with_configmap_vars_becomes_an_app(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in", extra_args=["--batch-size", "2048"])
    code, data = report(catalog, capsys, str(chart))
    assert code == 0, data["problems"]
    result = data["apps"][0]
    assert result["status"] == "ok" and result["profile"] == "olares-v2"
    assert result["stack"] == "llamacpp-b8740" and result["model"] == "qwen36-35b-a3b"
    app = app_data(catalog, "marketqwen")
    # $(CONTEXT_SIZE), $(MODEL_ALIAS), $(MODEL_FILE) come from the ConfigMap; the GGUF from the init container
    assert app["context_length"] == 65536 and app["served_name"] == "qwen3.6-35b-a3b"
    assert app["quantization"] == "ud-q4kxl" and app["kv_cache_type"] == "q8_0"
    # CUDA_DEVICE_MEMORY_LIMIT_0 23000m is the fixture device's HAMi cap, which is what the fit sizes for this app
    # (its need is above the cap): written as the catalog writes it, left out
    assert "gpu_memory_mib" not in app
    assert any("gpu_memory_mib: 23000 MiB is what the fit sizes" in n for n in result["notes"])
    # the stack's shared args are recognised; what the catalog does not model stays, in order
    assert app["extra_args"] == ("--threads", "16", "--mlock", "--batch-size", "2048")
    assert app["resources"] == {"cpu_request": "4", "cpu_limit": "16", "memory_request": "24Gi",
                                "memory_limit": "40Gi", "disk_request": "30Gi", "disk_limit": "50Gi"}
    # what cannot be expressed is kept on the app with file:line
    unmapped = "\n".join(app["unmapped"])
    assert "marketqwen/templates/deployment.yaml:93: livenessProbe" in unmapped
    assert "volume cache (emptyDir) mounted at /cache" in unmapped
    # an olares-v2 chart into a catalog of the default olares-v3 profile: one note, not the v2 facts as unmapped
    assert "{{ .Values.userspace.appData }}/models" not in unmapped and "appData" not in unmapped
    assert sum("the chart is in the olares-v2 manifest profile" in n for n in result["notes"]) == 1
    assert "spec.website" not in unmapped and app["website"] == "https://example.org/marketqwen"  # kept (sync2)
    assert any(k.endswith("extra_args --batch-size 2048") and ":79:" in k for k in result["kept"])
    # the catalog still loads and the new app renders
    assert "marketqwen" in load_catalog(catalog).apps
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0


def test_vllm_launcher_script_and_speculative_config(catalog, tmp_path, capsys):
    chart = oc.vllm_chart(tmp_path / "in")
    code, data = report(catalog, capsys, str(chart))
    assert code == 0, data["problems"]
    app = app_data(catalog, "marketgemma")
    # `sh -c 'pip install ... && exec vllm serve "$@"' -- $(MODEL_NAME) ...`: the positional args are read
    assert app["stack"] == "vllm-nightly" and app["model"] == "gemma4-e4b" and app["context_length"] == 32000
    assert app["speculative"] == {"method": "mtp", "tokens": 3, "drafter": "assistant"}
    assert app["gpu_memory_utilization"] == 0.85
    assert app["extra_args"] == ("--dtype", "auto") and app["env"] == {"HF_HOME": "/models/huggingface"}
    assert any("pip install --quiet soundfile" in u and "deployment.yaml:40:" in u for u in app["unmapped"])


def test_v3_chart_of_our_own_render(catalog, tmp_path, capsys):
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0
    capsys.readouterr()
    original = (catalog / "apps" / "gemmalab.yaml").read_text()
    (catalog / "apps" / "gemmalab.yaml").unlink()
    code, data = report(catalog, capsys, str(tmp_path / "charts" / "gemmalab"))
    assert code == 0, data["problems"]
    assert data["apps"][0]["profile"] == "olares-v3" and data["apps"][0]["unmapped"] == []
    app = app_data(catalog, "gemmalab")
    assert app["speculative"] == {"method": "mtp", "tokens": 3, "drafter": "assistant"}
    assert app["extra_args"] == ("--limit-mm-per-prompt", '{"image": 1, "audio": 0}')
    assert "unmapped" not in app
    assert {k: v for k, v in app.items()} == {k: v for k, v in read_document_text(tmp_path, original).items()}



def test_a_vllm_image_without_a_command_serves_with_its_entrypoint(catalog, tmp_path, capsys):
    """vllm/vllm-openai images run `vllm serve` as their entrypoint (github.com/vllm-project/vllm@dead20baf70df
    docker/Dockerfile, stage `vllm-openai`); a chart that sets only `args` (the second public store's
    llamacppdiffusiongemma26a4bone) imports as the same app as one that writes the command."""
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0
    capsys.readouterr()
    values = tmp_path / "charts" / "gemmalab" / "values.yaml"
    text = values.read_text()
    assert "  command:\n  - vllm\n  - serve\n" in text
    values.write_text(text.replace("  command:\n  - vllm\n  - serve\n", ""))
    original = (catalog / "apps" / "gemmalab.yaml").read_text()
    (catalog / "apps" / "gemmalab.yaml").unlink()
    code, data = report(catalog, capsys, str(tmp_path / "charts" / "gemmalab"))
    assert code == 0, data["problems"]
    assert data["apps"][0]["status"] == "ok"
    app, before = app_data(catalog, "gemmalab"), read_document_text(tmp_path, original)
    for key in ("stack", "model", "context_length", "speculative", "extra_args"):
        assert app.get(key) == before.get(key), key


def test_owners_come_from_the_submitter_where_the_developer_is_no_handle(catalog, tmp_path, capsys):
    """No owners file and `developer: Liquid AI` (the second public store's sglanglfm258ba1bone): the owner is the
    submitter, a GitHub handle; the developer stays the app's `developer`."""
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0
    capsys.readouterr()
    chart = tmp_path / "charts" / "gemmalab"
    (chart / "owners").unlink()
    manifest = chart / "OlaresManifest.yaml"
    manifest.write_text(manifest.read_text().replace("  developer: labmaintainer\n", "  developer: Liquid AI\n"))
    (catalog / "apps" / "gemmalab.yaml").unlink()
    code, data = report(catalog, capsys, str(chart))
    assert code == 0, data["problems"]
    app = app_data(catalog, "gemmalab")
    assert list(app["owners"]) == ["labmaintainer"] and app["developer"] == "Liquid AI"
    assert any("owners taken from spec.submitter" in n for n in data["apps"][0]["notes"])

def test_tgz_package_reads_as_the_folder(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in")
    package = oc.package(chart, tmp_path / "marketqwen-1.0.3.tgz")
    code, from_tgz = report(catalog, capsys, str(package), "--dry-run")
    assert code == 0
    code, from_folder = report(catalog, capsys, str(chart), "--dry-run")

    def strip(s: str) -> str:
        # the report names the charts as given; the app it writes, relative to the catalog (docs/import.md)
        for given, recorded in ((package, "../marketqwen-1.0.3.tgz"), (chart, "../in/marketqwen")):
            s = s.replace(str(given) + ":", "X/").replace(str(given) + "/", "X/")
            s = s.replace(recorded + ":", "X/").replace(recorded + "/", "X/")
        return s

    for result in (from_tgz["apps"][0], from_folder["apps"][0]):
        result.pop("path")
    assert json.loads(strip(json.dumps(from_tgz["apps"]))) == json.loads(strip(json.dumps(from_folder["apps"])))
    assert any(f"{package}:templates/deployment.yaml:91: livenessProbe" in u for u in from_tgz["apps"][0]["unmapped"])


def test_admin_branch_of_the_manifest_and_templates_is_imported(catalog, tmp_path, capsys):
    """Olares renders both the manifest and the templates with the installer's values; the admin's branch
    (`admin == bfl.username`) is the shared server, the other one a per-user client."""
    branch = (f"{oc.ADMIN}\n            - \"--parallel\"\n            - \"2\"\n"
              "            {{- else }}\n            - \"--parallel\"\n            - \"64\"\n            {{- end }}\n")
    chart = oc.llamacpp_chart(tmp_path / "in", branched=True)
    text = (chart / "templates" / "deployment.yaml").read_text().replace('            - "--mlock"\n',
                                                                          '            - "--mlock"\n' + branch)
    (chart / "templates" / "deployment.yaml").write_text(text)
    code, data = report(catalog, capsys, str(chart))
    assert code == 0, data["problems"]
    app = app_data(catalog, "marketqwen")
    assert app["resources"]["cpu_limit"] == "16" and app["resources"]["disk_request"] == "30Gi"  # not 800m / 50Mi
    assert app["extra_args"][-2:] == ("--parallel", "2")  # not 64


def test_launcher_script_defaults_and_dollar_escapes(catalog, tmp_path, capsys):
    """`${CTX_SIZE:-262144}` takes the default when the variable is unset, `$$(X)` stays a literal `$(X)`."""
    chart = oc.llamacpp_chart(tmp_path / "in", extra_args=["--override-tensor", "$$(LITERAL)"])
    text = (chart / "templates" / "deployment.yaml").read_text()
    text = text.replace('          command: ["/app/llama-server"]\n          args:\n',
                        '          command: ["/bin/bash", "-c"]\n          args:\n'
                        '            - |\n              set -e\n              cd /app\n'
                        '              exec ./llama-server --model "/models/$MODEL_FILE" --alias "$MODEL_ALIAS" \\\n'
                        '                --host 0.0.0.0 --port 8080 --ctx-size "${UNSET_CTX:-131072}" \\\n'
                        '                --threads "${THREADS:-4}" "$@"\n            - "--"\n')
    (chart / "templates" / "deployment.yaml").write_text(text)
    code, data = report(catalog, capsys, str(chart), "--dry-run")
    assert code == 0, data["problems"]
    app = data["apps"][0]["app"]
    assert app["context_length"] == 131072  # the default of an unset variable
    assert app["extra_args"][:2] == ["--threads", "16"]  # THREADS is set by the ConfigMap
    assert "$(LITERAL)" in app["extra_args"]
    assert any("launcher script" in n for n in data["apps"][0]["notes"])


# --- drafts ---------------------------------------------------------------------------------------------

def test_unknown_model_and_stack_are_drafted(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in")
    text = (chart / "templates" / "deployment.yaml").read_text()
    text = text.replace("unsloth/Qwen3.6-35B-A3B-GGUF/resolve/main/Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf",
                        "example-org/Tiny-Chat-7B-GGUF/resolve/main/Tiny-Chat-7B-Q5_K_M.gguf")
    text = text.replace('MODEL_FILE: "Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"', 'MODEL_FILE: "Tiny-Chat-7B-Q5_K_M.gguf"')
    text = text.replace("server-cuda13-b8740", "server-cuda13-b9999")
    (chart / "templates" / "deployment.yaml").write_text(text)
    code, data = report(catalog, capsys, str(chart))
    assert code == 0, data["problems"]
    assert data["apps"][0]["status"] == "draft"
    model = catalog / "drafts" / "models" / "tiny-chat-7b.yaml"
    stack = catalog / "drafts" / "stacks" / "llama.cpp-server-cuda13-b9999.yaml"
    app = catalog / "drafts" / "apps" / "marketqwen.yaml"
    assert model.is_file() and stack.is_file() and app.is_file()
    assert not (catalog / "apps" / "marketqwen.yaml").exists()
    head = model.read_text()
    assert "# [draft] missing: family, architecture, weights.0.size_gib, sources" in head
    assert "repo: example-org/Tiny-Chat-7B-GGUF" in head and "quant: q5_k_m" in head
    assert "# [draft] missing: version" in stack.read_text()
    load_catalog(catalog)  # drafts/ is not read: the catalog still loads


def test_a_new_quant_of_a_known_model_extends_its_file_as_a_draft(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in")
    text = (chart / "templates" / "deployment.yaml").read_text().replace("UD-Q4_K_XL", "Q3_K_M")
    (chart / "templates" / "deployment.yaml").write_text(text)
    code, _ = report(catalog, capsys, str(chart))
    assert code == 0
    draft = (catalog / "drafts" / "models" / "qwen36-35b-a3b.yaml").read_text()
    assert "# Test fixture: trimmed copy" in draft  # the model file's own comments are kept
    assert "file: Qwen3.6-35B-A3B-Q3_K_M.gguf" in draft and "file: Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf" in draft
    assert "# [draft] missing: weights.1.size_gib" in draft


# --- unsupported engines ----------------------------------------------------------------------------------

def test_a_speech_server_is_reported_unsupported_and_left_out(catalog, tmp_path, capsys):
    tts = oc.vllm_chart(tmp_path / "in", name="markettts", image="vllm/vllm-omni:v0.18.0", program="vllm-omni")
    good = oc.llamacpp_chart(tmp_path / "in")
    code, data = report(catalog, capsys, str(tts), str(good))
    assert code == 3  # something was skipped, the rest written (docs/import.md)
    assert data["apps"][0]["status"] == "unsupported" and "TTS" in data["apps"][0]["unsupported"]
    assert not (catalog / "apps" / "markettts.yaml").exists()
    assert (catalog / "apps" / "marketqwen.yaml").exists()


# --- bad inputs: exit 1, nothing written ----------------------------------------------------------------

def _refused(catalog: Path, capsys, *paths: str) -> str:
    before = oc.snapshot(catalog)
    code = run(catalog, *paths)
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err
    assert "nothing was written" in captured.err
    assert oc.snapshot(catalog) == before
    return captured.err


def test_not_an_olares_chart(catalog, tmp_path, capsys):
    folder = tmp_path / "in" / "plain"
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: plain\nversion: 1.0.0\n")
    err = _refused(catalog, capsys, str(folder))
    assert "not an Olares application chart (no OlaresManifest.yaml)" in err


def test_unknown_engine(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in")
    text = (chart / "templates" / "deployment.yaml").read_text()
    text = text.replace('command: ["/app/llama-server"]', 'command: ["/opt/mystery/serve-model"]')
    text = text.replace("ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740", "example.org/mystery:1.0")
    (chart / "templates" / "deployment.yaml").write_text(text)
    err = _refused(catalog, capsys, str(chart))  # with other charts: they are written (test_import_store.py)
    assert "unknown engine: llamacpp-server runs /opt/mystery/serve-model" in err
    assert "deployment.yaml:" in err


def test_template_reading_a_missing_value(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in", ctx_arg="{{ .Values.engine.contextSize }}")
    err = _refused(catalog, capsys, str(chart))
    assert "marketqwen/templates/deployment.yaml:66: the template reads .Values.engine.contextSize" in err


def test_template_that_helm_cannot_render(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in", ctx_arg="{{ .Values.engine.context.size | default 4096 }}")
    (chart / "values.yaml").write_text("engine: {}\n")
    err = _refused(catalog, capsys, str(chart))
    assert "in/marketqwen/templates/deployment.yaml:66: Helm cannot render it" in err and "nil pointer" in err
    chart2 = oc.llamacpp_chart(tmp_path / "in2", ctx_arg="{{ required \"set ctx\" .Values.ctx }}")
    err = _refused(catalog, capsys, str(chart2))
    assert "in2/marketqwen/templates/deployment.yaml:66: Helm cannot render it" in err and "set ctx" in err


def test_undefined_dollar_var(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in", ctx_arg="$(CTX_TYPO)")
    err = _refused(catalog, capsys, str(chart))
    assert "deployment.yaml:66: $(CTX_TYPO) is not defined in the container's env or envFrom" in err


@pytest.mark.parametrize("member", ["../escape.yaml", "marketqwen/../../escape.yaml", "/etc/escape.yaml"])
def test_tgz_with_a_member_outside_the_chart(catalog, tmp_path, capsys, member):
    chart = oc.llamacpp_chart(tmp_path / "in")
    package = oc.package(chart, tmp_path / "evil.tgz", extra_members={member: b"x: 1\n"})
    err = _refused(catalog, capsys, str(package))
    assert "is refused (no member may leave the chart)" in err
    assert not (tmp_path / "escape.yaml").exists()


def test_tgz_with_a_link(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in")
    package = oc.package(chart, tmp_path / "link.tgz", symlink=("marketqwen/templates/x.yaml", "/etc/passwd"))
    assert "links are refused" in _refused(catalog, capsys, str(package))


def test_not_a_package(catalog, tmp_path, capsys):
    bogus = tmp_path / "bogus.tgz"
    bogus.write_bytes(b"not gzip at all")
    assert "not a readable .tgz chart package" in _refused(catalog, capsys, str(bogus))


def test_package_over_the_size_cap(catalog, tmp_path, capsys, monkeypatch):
    from generator.importer import source

    monkeypatch.setattr(source, "MAX_FILE_BYTES", 1000)
    chart = oc.llamacpp_chart(tmp_path / "in")
    package = oc.package(chart, tmp_path / "big.tgz")
    assert "over the 1000-byte cap per file" in _refused(catalog, capsys, str(package))


# --- existing apps and --update ---------------------------------------------------------------------------

def test_existing_app_is_refused_without_update(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in", name="qwenlab")
    err = _refused(catalog, capsys, str(chart))
    assert "app 'qwenlab' exists; pass --update" in err


def test_update_changes_only_differing_fields_and_keeps_comments(catalog, tmp_path, capsys):
    path = catalog / "apps" / "qwenlab.yaml"
    original = path.read_text().replace("kv_cache_type: q4_0\n", "kv_cache_type: q4_0   # tuned by hand\n")
    original = original.replace("version: 1.0.0\n", "# the released version\nversion: 1.0.0\n")
    path.write_text(original)
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0
    chart = tmp_path / "charts" / "qwenlab"
    values = (chart / "values.yaml").read_text()
    values = values.replace("  - '65536'\n", "  - '32768'\n").replace("  - q4_0\n", "  - q8_0\n")
    (chart / "values.yaml").write_text(values)
    code = run(catalog, str(chart), "--update")
    out = capsys.readouterr().out
    assert code == 0, out
    assert "updated app: context_length, kv_cache_type" in out
    new = path.read_text()
    expected = original.replace("context_length: 65536", "context_length: 32768").replace(
        "kv_cache_type: q4_0   # tuned by hand", "kv_cache_type: q8_0  # tuned by hand")
    assert new == expected  # every other line, comment and the key order are byte-identical
    assert run(catalog, str(chart), "--update") == 0
    assert "unchanged" in capsys.readouterr().out and path.read_text() == expected


def test_update_adds_and_removes_fields_in_place(catalog, tmp_path, capsys):
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0
    chart = tmp_path / "charts" / "qwenlab"
    values = (chart / "values.yaml").read_text()
    values = values.replace("  - --cache-type-k\n  - q4_0\n  - --cache-type-v\n  - q4_0\n", "")
    values = values.replace("  - --alias\n  - qwenlab\n", "  - --alias\n  - qwen-served\n")
    (chart / "values.yaml").write_text(values)
    assert run(catalog, str(chart), "--update") == 0, capsys.readouterr()
    app = app_data(catalog, "qwenlab")
    assert "kv_cache_type" not in app and app["served_name"] == "qwen-served"
    text = (catalog / "apps" / "qwenlab.yaml").read_text()
    assert text.index("served_name:") > text.index("context_length:")  # placed in the App model's field order
    load_catalog(catalog)


def test_dry_run_json_writes_nothing(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in")
    before = oc.snapshot(catalog)
    code, data = report(catalog, capsys, str(chart), "--dry-run")
    assert code == 0 and data["dry_run"] is True
    assert [w["action"] for w in data["writes"]] == ["new app"]
    assert oc.snapshot(catalog) == before


def test_a_file_the_rendered_chart_would_not_provide_makes_a_draft(catalog, tmp_path, capsys):
    """`--chat-template-file /models/chat_template.jinja` written by an init container: kept in extra_args it
    would point at nothing in the re-rendered chart, so the app is a draft that says so."""
    chart = oc.llamacpp_chart(tmp_path / "in", extra_args=["--chat-template-file", "/models/chat_template.jinja"])
    code, data = report(catalog, capsys, str(chart))
    assert code == 0
    result = data["apps"][0]
    assert result["status"] == "draft"
    assert any("--chat-template-file /models/chat_template.jinja" in m and "deployment.yaml:80" in m
               for m in result["missing"])
    assert (catalog / "drafts" / "apps" / "marketqwen.yaml").is_file()


def test_literal_secrets_are_neither_imported_nor_shown(catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in", extra_args=["--api-key", "sk-verysecret-1234", "--mlock"])
    text = (chart / "templates" / "deployment.yaml").read_text().replace(
        "            - name: GGML_CUDA_GRAPH_OPT\n",
        "            - name: SERVICE_PASSWORD\n              value: \"hunter2-secret\"\n"
        "            - name: HF_TOKEN\n              value: \"hf_literaltoken\"\n"
        "            - name: GGML_CUDA_GRAPH_OPT\n")
    (chart / "templates" / "deployment.yaml").write_text(text)
    code = run(catalog, str(chart), "--json")
    out = capsys.readouterr().out
    assert code == 0, out
    written = (catalog / "apps" / "marketqwen.yaml").read_text()
    for secret in ("sk-verysecret-1234", "hunter2-secret", "hf_literaltoken"):
        assert secret not in out and secret not in written
    assert "--api-key: a literal secret is not imported" in written
    assert "env SERVICE_PASSWORD: a literal secret is not imported" in written


def test_engine_download_with_hf_flags(catalog, tmp_path, capsys):
    """llama-server downloads the GGUF itself (`-hf REPO --hf-file FILE`): the same weight of the catalog."""
    chart = oc.llamacpp_chart(tmp_path / "in")
    text = (chart / "templates" / "deployment.yaml").read_text().replace(
        '            - "--model"\n            - "/models/$(MODEL_FILE)"\n',
        '            - "-hf"\n            - "unsloth/Qwen3.6-35B-A3B-GGUF"\n'
        '            - "--hf-file"\n            - "$(MODEL_FILE)"\n')
    (chart / "templates" / "deployment.yaml").write_text(text)
    code, data = report(catalog, capsys, str(chart), "--dry-run")
    assert code == 0, data["problems"]
    result = data["apps"][0]
    assert result["status"] == "ok"
    assert (result["app"]["model"], result["app"]["quantization"]) == ("qwen36-35b-a3b", "ud-q4kxl")
    assert any("downloads the model itself (-hf)" in n for n in result["notes"])


def test_a_second_import_extends_the_first_draft(catalog, tmp_path, capsys):
    def chart(name: str, quant: str) -> Path:
        folder = oc.llamacpp_chart(tmp_path / name, name=name)
        text = (folder / "templates" / "deployment.yaml").read_text()
        text = text.replace("unsloth/Qwen3.6-35B-A3B-GGUF/resolve/main/Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf",
                            f"example-org/Tiny-Chat-7B-GGUF/resolve/main/Tiny-Chat-7B-{quant}.gguf")
        text = text.replace('MODEL_FILE: "Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"', f'MODEL_FILE: "Tiny-Chat-7B-{quant}.gguf"')
        (folder / "templates" / "deployment.yaml").write_text(text)
        return folder

    assert run(catalog, str(chart("tinyone", "Q4_K_M"))) == 0
    assert run(catalog, str(chart("tinytwo", "Q8_0"))) == 0
    capsys.readouterr()
    drafts = sorted(p.name for p in (catalog / "drafts" / "models").iterdir())
    assert drafts == ["tiny-chat-7b.yaml"]
    draft = (catalog / "drafts" / "models" / "tiny-chat-7b.yaml").read_text()
    assert "quant: q4_k_m" in draft and "quant: q8_0" in draft
    assert draft.count("# [draft] missing:") == 1
    assert "weights.0.size_gib, weights.1.size_gib" in draft
