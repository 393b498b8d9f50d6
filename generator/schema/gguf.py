"""GGUF facts the catalog records: ggml tensor types and the compact form of a file's tensor list.

A model file written by `catalog new` records the tensors its GGUF header lists (name, shape, ggml type), so the
fit reads the real shape instead of one typed by hand (generator/fit/realshape.py `recorded_spec`). A 64-layer
model has about a thousand tensors, most of them the same tensor on every layer, so one entry is a tensor name
with `#` for the layer number, its type, its shape and the layers it is on:

    blk.#.attn_q.weight Q4_K 5120x12288 @3-63:4

`@3-63:4` is 3, 7, ..., 63 (`a-b` steps by one, `a-b:s` by s, `a` one layer; parts joined by `,`); an entry
without `@` is one tensor. Shapes are in ggml order (ne[0], the row length, first), as the GGUF header stores
them. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# ggml types by id: (name, values per block, bytes per block): ggml/src/ggml.c `type_traits`, the same table as
# gguf-py's constants.py GGMLQuantizationType / GGML_QUANT_SIZES (github.com/ggml-org/llama.cpp gguf-py;
# tests/newapp/test_gguf.py compares the two). Ids 4, 5 and 31-33, 36-38 were removed types and have no size.
GGML_TYPE_TABLE: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 40), 10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98), 19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110), 22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56), 30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18),
}
GGML_BLOCKS: dict[str, tuple[int, int]] = {name: (block, size) for name, block, size in GGML_TYPE_TABLE.values()}

ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9_.#-]{1,200}) (?P<type>[A-Z0-9_]{2,10}) "
                   r"(?P<ne>[0-9]{1,12}(?:x[0-9]{1,12}){0,3})(?: @(?P<layers>[0-9:,-]{1,400}))?$")
_PART = re.compile(r"^([0-9]{1,6})(?:-([0-9]{1,6})(?::([0-9]{1,6}))?)?$")


def tensor_bytes(type_name: str, ne: Iterable[int]) -> int:
    """Bytes of one tensor of ggml type `type_name` and shape `ne` (rows are whole blocks in a valid file)."""
    block, size = GGML_BLOCKS[type_name]
    count = 1
    for n in ne:
        count *= n
    return count // block * size


def layers_of(text: str) -> list[int]:
    """`0-2,4-62:2` -> the layer numbers; ValueError on a malformed part."""
    out: list[int] = []
    for part in text.split(","):
        m = _PART.match(part)
        if m is None:
            raise ValueError(f"layer list part {part!r}: write `a`, `a-b` or `a-b:step`")
        start = int(m.group(1))
        end = int(m.group(2)) if m.group(2) is not None else start
        step = int(m.group(3)) if m.group(3) is not None else 1
        if end < start or step < 1:
            raise ValueError(f"layer list part {part!r}: the end is below the start, or the step is 0")
        out.extend(range(start, end + 1, step))
    return out


def _runs(layers: list[int]) -> str:
    """The shortest text `layers_of` reads back as `layers` (sorted, distinct): whole arithmetic runs first,
    tried by residue class for the steps 1-8 (a hybrid model's recurrent layers are 3 of every 4)."""
    def progression(xs: list[int]) -> str | None:
        if len(xs) == 1:
            return str(xs[0])
        step = xs[1] - xs[0]
        if any(b - a != step for a, b in zip(xs, xs[1:], strict=False)):
            return None
        return f"{xs[0]}-{xs[-1]}" + ("" if step == 1 else f":{step}")

    whole = progression(layers)
    if whole is not None:
        return whole
    best: str | None = None
    for step in range(2, 9):
        classes = [[x for x in layers if x % step == r] for r in range(step)]
        parts = [progression(c) for c in classes if c]
        if all(p is not None for p in parts):
            text = ",".join(p for p in parts if p is not None)
            if best is None or len(text) < len(best):
                best = text
    if best is not None:
        return best
    runs: list[str] = []
    run = [layers[0]]
    for x in layers[1:]:
        if x == run[-1] + 1:
            run.append(x)
        else:
            runs.append(progression(run) or "")
            run = [x]
    runs.append(progression(run) or "")
    return ",".join(runs)


_LAYER = re.compile(r"^blk\.([0-9]+)\.")


def compact(tensors: Iterable[tuple[str, tuple[int, ...], str]]) -> tuple[str, ...]:
    """(name, ne, type) triples -> entries, in the order each entry's first tensor comes in the file."""
    groups: dict[tuple[str, str, tuple[int, ...]], list[int]] = {}
    single: dict[tuple[str, str, tuple[int, ...]], None] = {}
    order: list[tuple[str, str, tuple[int, ...]]] = []
    for name, ne, type_name in tensors:
        m = _LAYER.match(name)
        if m is None:
            key = (name, type_name, tuple(ne))
            single[key] = None
            order.append(key)
            continue
        key = ("blk.#." + name[m.end():], type_name, tuple(ne))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(1)))
    out = []
    for key in order:
        name, type_name, ne = key
        shape = "x".join(str(n) for n in ne)
        if key in groups:
            out.append(f"{name} {type_name} {shape} @{_runs(sorted(set(groups[key])))}")
        else:
            out.append(f"{name} {type_name} {shape}")
    return tuple(out)


def expand(entries: Iterable[str]) -> Iterator[tuple[str, tuple[int, ...], str]]:
    """Entries -> (name, ne, type) for every tensor, layer by layer; ValueError on a malformed entry."""
    for entry in entries:
        m = ENTRY.match(entry)
        if m is None:
            raise ValueError(f"tensor entry {entry!r}: write `NAME TYPE NE0xNE1 [@LAYERS]`")
        name, type_name = m.group("name"), m.group("type")
        if type_name not in GGML_BLOCKS:
            raise ValueError(f"tensor entry {entry!r}: unknown ggml type {type_name} "
                             f"(known: {', '.join(sorted(GGML_BLOCKS))})")
        ne = tuple(int(n) for n in m.group("ne").split("x"))
        if m.group("layers") is None:
            if "#" in name:
                raise ValueError(f"tensor entry {entry!r}: a name with `#` needs its layers (`@0-63`)")
            yield name, ne, type_name
            continue
        if not name.startswith("blk.#."):
            raise ValueError(f"tensor entry {entry!r}: only `blk.#.` names take layers")
        for layer in layers_of(m.group("layers")):
            yield name.replace("#", str(layer), 1), ne, type_name


__all__ = ["ENTRY", "GGML_BLOCKS", "GGML_TYPE_TABLE", "compact", "expand", "layers_of", "tensor_bytes"]
