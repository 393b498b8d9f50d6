"""`catalog new` end to end: a GGUF the project never saw, written here with the project's real-shape writer (gguf-py's
GGUFWriter underneath), served over loopback by a stand-in for the Hugging Face hub (support/hfhub.py), becomes a
model and an app that render and pass `check`; bad input is refused with one clear line and nothing written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.fit.memory import ggml_group_bytes_per_token
from generator.fit.realshape import write_spec
from support.bump import run_cli
from support.catalogs import MARKET_CATALOG
from support.hfhub import Hub
from support.newgguf import tiny_spec

REPO = "testorg/Tiny-Qwen3-GGUF"
FILE = "Tiny-Qwen3-4L-Q8_0.gguf"
OWNER = ["--title", "Tiny Qwen3", "--icon", "https://example.com/icon.png", "--category", "LLM Chat"]


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "store" / "catalog"
    shutil.copytree(MARKET_CATALOG, root)
    return root


@pytest.fixture
def hub(tmp_path: Path):
    h = Hub()
    path = write_spec(tiny_spec(), tmp_path / FILE)
    h.files[REPO] = {FILE: path, "config.json": b'{"model_type": "qwen3", "num_hidden_layers": 4}'}
    h.start()
    yield h
    h.stop()


def _new(capsys, catalog: Path, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "new", *args, "--stack", "llamacpp-b8740", "--device", "olares-one", "--catalog",
                   str(catalog))


def _listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("ranges", [True, False], ids=["range", "no-range"])
def test_a_new_gguf_becomes_a_model_and_app_that_render_and_check(capsys, catalog, hub, tmp_path, ranges):
    hub.ranges = ranges
    url = f"{hub.url}/{REPO}/resolve/main/{FILE}"
    code, out, err = _new(capsys, catalog, "tinyqwen", "--gguf", url, *OWNER)
    assert code == 0, err
    model = load_catalog(catalog).models["tiny-qwen3-4l"]
    fa = model.architecture.full_attention
    assert (model.architecture.arch, fa.layers, fa.kv_heads, fa.head_dim) == ("qwen3", 4, 2, 64)
    header_kv = 4 * 2 * (64 + 64) * 2  # the header's layers x KV heads x (key_length + value_length) x f16
    assert ggml_group_bytes_per_token(fa, "f16", "f16") == header_kv
    assert f"KV {header_kv:,} bytes per token" in out
    weight = model.weights[0]
    assert weight.header is not None and weight.header.file_bytes == os.path.getsize(tmp_path / FILE)
    assert weight.header.tensor_bytes == tiny_spec().tensor_bytes
    assert any(f.field == "architecture.full_attention.kv_heads" and f.source.endswith("qwen3.attention.head_count_kv")
               for f in model.facts)
    app = load_catalog(catalog).apps["tinyqwen"].app
    assert (app.version, app.status, app.context_length) == ("1.0.0", "active", 32768)
    assert not app.upgrade_description and not app.benchmarks
    # the fit's KV part is the header's bytes per token over the app's cells
    from generator.engines import engine_for
    from generator.engines.settings import settings_for
    from generator.fit.estimate import estimate
    from generator.fit.sizing import sized

    r = sized(load_catalog(catalog).apps["tinyqwen"])
    fit = estimate(r, settings_for(r, engine_for(r)))
    part = fit.part("KV full attention")
    assert part is not None and part.mib == pytest.approx(header_kv * 32768 / 2**20, rel=1e-6)
    out_dir = tmp_path / "store" / "charts"
    code, _, err = run_cli(capsys, "render", "tinyqwen", "--catalog", str(catalog), "--out", str(out_dir))
    assert code == 0, err
    code, out, err = run_cli(capsys, "check", "tinyqwen", "--catalog", str(catalog))
    assert code == 0, out + err
    if ranges:
        assert all(r is not None for p, _, r in hub.seen if p.endswith(".gguf"))
    assert hub.sent <= os.path.getsize(tmp_path / FILE) + 2 * 2**20


def test_without_title_and_icon_the_app_is_a_draft(capsys, catalog, hub):
    code, out, err = _new(capsys, catalog, "tinyqwen", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}")
    assert code == 0, err
    draft = catalog / "drafts" / "apps" / "tinyqwen.yaml"
    assert draft.read_text().startswith("# [draft] missing: title, icon, categories")
    assert not (catalog / "apps" / "tinyqwen.yaml").exists()
    assert "tinyqwen" not in load_catalog(catalog).apps


def test_hf_picks_the_quant_records_sizes_and_sends_the_token_only_to_the_hub(capsys, catalog, hub, monkeypatch):
    other = "Tiny-Qwen3-4L-Q4_K_M.gguf"
    hub.files[REPO][other] = b"not this one"
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_123")
    code, out, err = _new(capsys, catalog, "tinyqwen", "--hf", f"{REPO}:Q8_0", *OWNER)
    assert code == 0, err
    assert "hf_secret_token_123" not in out + err
    text = "".join(p.read_text() for p in catalog.rglob("*.yaml"))
    assert "hf_secret_token_123" not in text
    assert {auth for _, auth, _ in hub.seen} == {"Bearer hf_secret_token_123"}
    model = load_catalog(catalog).models["tiny-qwen3-4l"]
    assert model.weights[0].file == FILE and model.weights[0].repo == REPO
    assert model.architecture.hf_model_type == "qwen3"
    assert any(f.field == "architecture.hf_model_type" and "config.json" in f.source for f in model.facts)


def test_hf_without_a_token_sends_none(capsys, catalog, hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    code, _, err = _new(capsys, catalog, "tinyqwen", "--hf", f"{REPO}:q8_0", *OWNER)
    assert code == 0, err
    assert {auth for _, auth, _ in hub.seen} == {None}


def _refused(capsys, catalog, hub, *args: str) -> str:
    before = _listing(catalog)
    code, out, err = _new(capsys, catalog, *args)
    assert code != 0
    assert _listing(catalog) == before, "nothing is written on an error"
    # the one error line, between the CLI's own "catalog: …" (which catalog) and "… nothing was written." lines
    lines = [line for line in err.strip().splitlines() if line.strip() and not line.startswith("catalog: ")
             and "nothing was written" not in line]
    assert len(lines) == 1, err
    return lines[0]


def test_unknown_architecture_is_refused_with_what_the_fit_knows(capsys, catalog, hub, tmp_path):
    hub.files[REPO]["odd.gguf"] = write_spec(tiny_spec("mamba9"), tmp_path / "odd.gguf")
    line = _refused(capsys, catalog, hub, "oddapp", "--gguf", f"{hub.url}/{REPO}/resolve/main/odd.gguf", *OWNER)
    assert "'mamba9' has no model in the fit" in line and "qwen35" in line and "docs/fit.md" in line


def test_a_lying_header_is_refused_with_the_first_disagreement(capsys, catalog, hub, tmp_path):
    hub.files[REPO]["lie.gguf"] = write_spec(tiny_spec(lie_kv=8), tmp_path / "lie.gguf")
    line = _refused(capsys, catalog, hub, "lieapp", "--gguf", f"{hub.url}/{REPO}/resolve/main/lie.gguf", *OWNER)
    assert "contradicts its own tensors" in line and "head_count_kv 8" in line and "blk.0.attn_k.weight" in line


def test_not_a_gguf(capsys, catalog, hub):
    hub.files[REPO]["page.gguf"] = b"<html>" + b"x" * 4096
    line = _refused(capsys, catalog, hub, "pageapp", "--gguf", f"{hub.url}/{REPO}/resolve/main/page.gguf", *OWNER)
    assert "not a GGUF file" in line


def test_a_header_over_the_cap(capsys, catalog, hub, tmp_path):
    hub.files[REPO]["big.gguf"] = write_spec(tiny_spec(vocab=40000), tmp_path / "big.gguf")
    line = _refused(capsys, catalog, hub, "bigapp", "--gguf", f"{hub.url}/{REPO}/resolve/main/big.gguf",
                    "--header-cap", "65536", *OWNER)
    assert "no complete header in its first 65,536 bytes" in line


def test_a_slow_server_past_the_deadline(capsys, catalog, hub):
    hub.delay_s, hub.chunk = 0.5, 1024
    line = _refused(capsys, catalog, hub, "slowapp", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}",
                    "--timeout", "1.5", *OWNER)
    assert "deadline of 1.5 s" in line


def test_an_existing_app_name_is_refused(capsys, catalog, hub):
    line = _refused(capsys, catalog, hub, "llamacppqwen36mtpone", "--gguf",
                    f"{hub.url}/{REPO}/resolve/main/{FILE}", *OWNER)
    assert "exists already" in line and "never overwrites" in line


def test_the_fit_reads_the_recorded_shape(capsys, catalog, hub):
    """The model `catalog new` wrote has no hand entry in realshape.SHAPES: the fit's shape and tensor sizes are the
    header's (the host-kept token embeddings are its Q8_0 token_embd.weight, 256 x 320 values)."""
    from generator.fit.llamacpp import ffn_width, host_weights_mib
    from generator.fit.realshape import SHAPES, shape_of, tensor_sizes

    code, _, err = _new(capsys, catalog, "tinyqwen", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}", *OWNER)
    assert code == 0, err
    r = load_catalog(catalog).apps["tinyqwen"]
    assert r.model.id not in SHAPES
    shape = shape_of(r.model)
    assert shape is not None and (shape.n_head, shape.n_ff, shape.tied_embeddings) == (4, 512, False)
    assert ffn_width(r) == 512
    sizes = tensor_sizes(r.model, r.app.quantization)
    assert sum(sizes.values()) == tiny_spec().tensor_bytes
    mib, note = host_weights_mib(r)
    assert mib == 256 * 320 // 32 * 34 / 2**20 and "real-shape" in note


def test_a_hybrid_mtp_header_reads_back_as_the_hand_typed_geometry(capsys, catalog, hub, tmp_path):
    """Qwen3.6 27B's real-shape file (llama.cpp's qwen35 metadata and tensors, the NextN layer included) read back by
    `catalog new` gives the geometry catalog/models typed by hand, and MTP drafting where the stack offers it."""
    from generator.fit.realshape import write

    hand = load_catalog(catalog).models["qwen36-27b"]
    write(hand, "q4km-mtp", tmp_path / "Qwen3.6-27B-Q4_K_M-mtp.gguf", mtp=True)
    hub.files[REPO]["Qwen3.6-27B-Q4_K_M-mtp.gguf"] = tmp_path / "Qwen3.6-27B-Q4_K_M-mtp.gguf"
    code, out, err = run_cli(capsys, "new", "qwenagain", "--gguf",
                             f"{hub.url}/{REPO}/resolve/main/Qwen3.6-27B-Q4_K_M-mtp.gguf", "--model-id", "qwen36-again",
                             "--stack", "llamacpp-mtp", "--device", "olares-one", *OWNER, "--catalog", str(catalog))
    assert code == 0, err
    cat = load_catalog(catalog)
    got = cat.models["qwen36-again"].architecture
    for name in ("arch", "layers", "hidden_size", "vocab_size", "full_attention", "recurrent", "mtp_layers",
                 "max_context"):
        assert getattr(got, name) == getattr(hand.architecture, name), name
    app = cat.apps["qwenagain"].app
    assert app.speculative is not None and app.speculative.method == "mtp"
    assert cat.models["qwen36-again"].weights[0].mtp_weights
    assert hub.sent < 64 * 2**20  # the header (a 248K-token vocabulary) and never the 16 GB of weights


def test_like_takes_settings_never_history_and_a_local_file_needs_its_repo(capsys, catalog, tmp_path):
    """`--like` copies the other app's stack, device and settings, not its version, history, benchmarks or
    measurements; a local GGUF is read from disk, and the chart's download source is `--repo`'s."""
    path = write_spec(tiny_spec(), tmp_path / FILE)
    code, _, err = run_cli(capsys, "new", "tinylocal", "--gguf", str(path), "--catalog", str(catalog), *OWNER)
    assert code != 0 and "--repo OWNER/REPO" in err
    code, out, err = run_cli(capsys, "new", "tinylocal", "--gguf", str(path), "--repo", REPO, "--like",
                             "llamacppqwen36mtpone", "--json", "--catalog", str(catalog), *OWNER)
    assert code == 0, err
    import json

    report = json.loads(out)
    assert report["kv_bytes_per_token_f16"] == 4 * 2 * 128 * 2 and not report["draft"]
    cat = load_catalog(catalog)
    like, app = cat.apps["llamacppqwen36mtpone"].app, cat.apps["tinylocal"].app
    assert (app.stack, app.device, app.kv_cache_type, app.resources) == (like.stack, like.device, like.kv_cache_type,
                                                                          like.resources)
    assert app.version == "1.0.0" and like.version != "1.0.0"
    assert not (app.upgrade_description or app.benchmarks or app.calibration or app.measured or app.unmapped)
    assert app.speculative is None  # the like's MTP needs NextN layers this file lacks
    assert any("speculative" in note for note in report["notes"])
    weight = cat.models["tiny-qwen3-4l"].weights[0]
    assert (weight.repo, weight.file) == (REPO, FILE)


def test_a_projector_is_recorded_and_turns_vision_on(capsys, catalog, hub, tmp_path):
    from generator.fit.realshape import Spec, Tensor

    clip = Spec(arch="clip", name="tiny-mmproj")
    clip.tensors.append(Tensor("v.patch_embd.weight", (16, 16, 3, 256), "F16"))
    hub.files[REPO]["mmproj-F16.gguf"] = write_spec(clip, tmp_path / "mmproj-F16.gguf")
    code, _, err = _new(capsys, catalog, "tinyvision", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}",
                        "--mmproj", f"{hub.url}/{REPO}/resolve/main/mmproj-F16.gguf", *OWNER)
    assert code == 0, err
    r = load_catalog(catalog).apps["tinyvision"]
    assert r.model.mmproj is not None and r.model.mmproj.file == "mmproj-F16.gguf"
    assert r.model.architecture.vision and r.app.vision
    # the projector's place is --mmproj, never the weights': a model file there is refused
    code, _, err = _new(capsys, catalog, "tinyvision2", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}",
                        "--model-id", "tiny-two", "--mmproj", f"{hub.url}/{REPO}/resolve/main/{FILE}", *OWNER)
    assert code != 0 and "not a projector" in err


def test_the_help_shows_the_whole_path(capsys):
    code, out, _ = run_cli(capsys, "new", "--help")
    assert code == 0
    steps = ["catalog new APP", "fill title/icon", "catalog render APP", "catalog check APP", "catalog smoke APP",
             "catalog bump APP", "catalog publish APP"]
    assert [out.index(s) for s in steps] == sorted(out.index(s) for s in steps)


def test_the_fit_weighs_the_recorded_tensors(capsys, catalog, hub):
    from generator.fit.vllm import weights_part

    code, _, err = _new(capsys, catalog, "tinyqwen", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}", *OWNER)
    assert code == 0, err
    r = load_catalog(catalog).apps["tinyqwen"]
    mib, note = weights_part(r, r.app.quantization)
    assert mib == tiny_spec().tensor_bytes / 2**20 and "GGUF header" in note


def test_a_hand_broken_record_is_refused_at_load(capsys, catalog, hub):
    code, _, err = _new(capsys, catalog, "tinyqwen", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}", *OWNER)
    assert code == 0, err
    path = catalog / "models" / "tiny-qwen3-4l.yaml"
    text = path.read_text()
    path.write_text(text.replace("blk.#.attn_q.weight Q8_0 256x256 @0-3", "blk.#.attn_q.weight Q8_0 256x256 @0-2"))
    code, out, err = run_cli(capsys, "check", "tinyqwen", "--no-lint", "--catalog", str(catalog))
    assert code == 1 and "tiny-qwen3-4l.yaml:" in err and "the tensors add up to" in err


def test_a_draft_file_is_recorded_as_the_models_drafter(capsys, catalog, hub, tmp_path):
    hub.files[REPO]["MTP/mtp-Tiny-Q8_0.gguf"] = write_spec(tiny_spec(layers=1), tmp_path / "mtp.gguf")
    code, _, err = _new(capsys, catalog, "tinydraft", "--gguf", f"{hub.url}/{REPO}/resolve/main/{FILE}", "--draft",
                        f"{hub.url}/{REPO}/resolve/main/MTP/mtp-Tiny-Q8_0.gguf", *OWNER)
    assert code == 0, err
    drafter = load_catalog(catalog).models["tiny-qwen3-4l"].drafters[0]
    assert drafter.kind == "mtp-assistant" and drafter.weights[0].file == "MTP/mtp-Tiny-Q8_0.gguf"
    assert drafter.weights[0].repo == REPO and drafter.params_b is not None


def test_one_part_of_a_split_gguf_is_refused(capsys, catalog, hub, tmp_path):
    spec = tiny_spec()
    spec.metadata.append(("split.count", 3, "u32"))  # gguf-split writes it unprefixed
    hub.files[REPO]["part.gguf"] = write_spec(spec, tmp_path / "part.gguf")
    line = _refused(capsys, catalog, hub, "partapp", "--gguf", f"{hub.url}/{REPO}/resolve/main/part.gguf", *OWNER)
    assert "split in 3" in line


def test_the_token_never_follows_a_redirect_to_another_host(capsys, catalog, hub, monkeypatch, tmp_path):
    """The hub answers a file with a redirect to its storage (another origin): the token goes to the hub only."""
    cdn = Hub()
    cdn.files["cdn/store"] = {"blob": tmp_path / FILE}
    cdn.start()
    try:
        hub.redirects[f"{REPO}/{FILE}"] = f"{cdn.url}/cdn/store/resolve/main/blob"
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", "hf_secret_token_123")
        code, _, err = _new(capsys, catalog, "tinyqwen", "--hf", f"{REPO}:Q8_0", *OWNER)
    finally:
        cdn.stop()
    assert code == 0, err
    assert cdn.seen and {auth for _, auth, _ in cdn.seen} == {None}
    assert {auth for _, auth, _ in hub.seen} == {"Bearer hf_secret_token_123"}


def test_a_hostile_name_in_the_header_is_not_copied(capsys, catalog, hub, tmp_path):
    spec = tiny_spec()
    spec.metadata = [(k, "\x1b]8;;evil\x07{{ .Values }}" if k == "general.name" else v, kind)
                     for k, v, kind in spec.metadata]
    hub.files[REPO]["hostile.gguf"] = write_spec(spec, tmp_path / "hostile.gguf")
    code, out, err = _new(capsys, catalog, "hostile", "--gguf", f"{hub.url}/{REPO}/resolve/main/hostile.gguf",
                          *OWNER)
    assert code == 0, err
    assert "\x1b" not in out + err
    model = load_catalog(catalog).models["tiny-qwen3-4l"]
    assert model.name == "tiny-qwen3-4l"


def test_a_hybrid_header_that_lies_about_its_layer_pattern(capsys, catalog, hub, tmp_path):
    from generator.fit.realshape import spec_for

    spec = spec_for(load_catalog(catalog).models["qwen36-27b"], "q4km")
    spec.metadata = [(k, 3 if k == "qwen35.full_attention_interval" else v, kind) for k, v, kind in spec.metadata]
    hub.files[REPO]["hybrid-lie.gguf"] = write_spec(spec, tmp_path / "hybrid-lie.gguf")
    line = _refused(capsys, catalog, hub, "hybridlie", "--gguf", f"{hub.url}/{REPO}/resolve/main/hybrid-lie.gguf",
                    *OWNER)
    assert "one attention layer in 3" in line and "gives 21 attention layers, but 16 blocks have attn_k" in line
