"""Write the real-shape GGUFs of the speed sweep (bench/speed/device.sh) and its plan, with the project's writer.

    .venv/bin/python bench/speed/make_models.py OUT_DIR

One file per (catalog model, weight file) of a llama.cpp app (generator/fit/realshape.py: the model's exact tensors and
types, all-zero data, a sparse file), in priority order (the device script runs them in this order and stops at its
deadline). Each row: the app it stands for, the file, the KV types of the app's argv, the depths llama-bench decodes at.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# (app, model, weight file, KV type, mtp file) — KV as the app's argv (turbo3, a fork's type, measured as q4_0)
ROWS = [
    ("llamacppqwen36mtpone", "qwen36-27b", "q4km", "q4_0", True),
    ("qwen36a3bvisionone", "qwen36-35b-a3b", "ud-q4kxl", "q4_0", False),
    ("gemma426ba4bone", "gemma4-26b-a4b", "ud-q4kxl", "q4_0", False),
    ("llamacppnemotron30a3bone", "nemotron-3-nano-30b-a3b", "ud-q4kxl", "q4_0", False),
    ("devstralsmallone", "devstral-small-2507", "ud-q5_k_xl", "q4_0", False),
    ("gemma4e2bone", "gemma4-e2b", "q8_0", "q4_0", False),
    ("qwen3coder30a3bone", "qwen3-coder-30b-a3b", "ud-q4_k_xl", "q8_0", False),
    ("llamacppqwen35iq4one", "qwen3.5-35b-a3b", "ud-iq4_xs", "q4_0", False),
    ("nemotron3nano4bone", "nemotron-3-nano-4b", "q8_0", "q4_0", False),
    ("llamacppglm47flash", "glm47-flash", "ud-q4kxl", "q4_0", False),
    ("llamacppgemma4audione", "gemma4-e4b", "q4km", "f16", False),
    ("cascade230a3bone", "nemotron-cascade-2-30b-a3b", "q4ks", "q4_0", False),
    ("vllmqwen3527bone", "qwen3.5-27b", "q4km", "q4_0", False),
    # test-half models the first sweeps did not reach (bench/speed/h100-run4)
    ("llamacppgemma412bone", "gemma-4-12b-qat", "ud-q4_k_xl", "q8_0", False),
    ("llamacppgemma426ba4bone", "gemma-4-26b-a4b-qat", "ud-q4_k_xl", "q8_0", False),
    # the MTP step on a shorter-step target than the 27B's (bench/speed/h100-run6: spec.py only, no llama-bench row)
    ("qwen36a3bvisionone", "qwen36-35b-a3b", "ud-q4kxl", "q4_0", True),
]


def main(out: Path) -> int:
    from generator.catalog import load_catalog
    from generator.fit import realshape

    cat = load_catalog(str(ROOT / "catalog"))
    out.mkdir(parents=True, exist_ok=True)
    plan = []
    for app, model_id, quant, kv, mtp in ROWS:
        model = cat.models[model_id]
        name = f"{model_id}-{quant}{'-mtp' if mtp else ''}.gguf"
        if not (out / name).exists():
            realshape.write(model, quant, out / name, mtp=mtp)
        spec = realshape.spec_for(model, quant, mtp=mtp, vocab=False)
        plan.append({"app": app, "model": model_id, "quant": quant, "gguf": name, "kv": kv, "mtp": mtp,
                     "tensor_bytes": spec.tensor_bytes})
        print(name, round(spec.tensor_bytes / 2**30, 2), "GiB", flush=True)
    (out / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
