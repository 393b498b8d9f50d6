"""A bounded reader of a GGUF header: the metadata key/values and the tensor infos, never the tensor data.

The format is GGUF version 2 and 3 as ggml-org/llama.cpp documents it (docs/gguf.md; gguf-py's
gguf_reader.py reads the same): the magic `GGUF`, the version, the tensor and key/value counts, the typed
key/values, the tensor infos (name, dimensions, ggml type, offset), then the data at the next multiple of
`general.alignment` (32 by default). gguf-py's `GGUFReader` is not used: it maps a whole file from a path
(np.memmap) and builds a view of every tensor's data, so it cannot read the first few MiB of a remote file;
this reader takes a byte buffer, says when it is too short (`Short`: read more), and never allocates more than
the buffer holds (counts are checked against the bytes left before anything is read).

Big arrays (a 248K-token vocabulary) are skipped, keeping their length only: `Header.kv` holds scalars,
strings, and arrays of numbers or booleans up to `KEEP_ARRAY` items; a longer array or one of strings is an
`ArrayInfo`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from generator.core import InputError
from generator.schema import GGML_TYPE_TABLE, tensor_bytes

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
KEEP_ARRAY = 65536
MAX_COUNT = 1 << 24  # tensors or key/values a header may declare; llama.cpp's largest files have a few thousand
MAX_DIMS = 4  # GGML_MAX_DIMS

# GGUFValueType (gguf-py constants.py): id -> struct format of one value (8 string, 9 array: read apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9

Scalar = int | float | bool | str


class Short(InputError):
    """The buffer ends inside the header: read at least `need` bytes in all and parse again (the readers catch
    it and read more; it reaches the user only as their own "no complete header" message)."""

    def __init__(self, need: int):
        super().__init__(f"the GGUF header continues past byte {need:,}")
        self.need = need


@dataclass(frozen=True)
class ArrayInfo:
    """A skipped array: its element type and length."""

    item_type: int
    count: int


@dataclass(frozen=True)
class TensorInfo:
    name: str
    ne: tuple[int, ...]  # ggml order
    type_id: int
    offset: int  # from the start of the data section

    @property
    def type_name(self) -> str:
        return GGML_TYPE_TABLE[self.type_id][0]

    @property
    def nbytes(self) -> int:
        return tensor_bytes(self.type_name, self.ne)


@dataclass(frozen=True)
class Header:
    version: int
    kv: dict[str, Scalar | list[Scalar] | ArrayInfo]
    tensors: tuple[TensorInfo, ...]
    data_offset: int  # where the tensor data starts: the header's end rounded up to the alignment

    @property
    def arch(self) -> str:
        value = self.kv.get("general.architecture")
        return value if isinstance(value, str) else ""

    @property
    def tensor_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)


class _Cursor:
    def __init__(self, buf: bytes, where: str):
        self.buf, self.pos, self.where = buf, 0, where

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.buf):
            raise Short(end)
        out = self.buf[self.pos:end]
        self.pos = end
        return out

    def unpack(self, fmt: str) -> Scalar:
        size = struct.calcsize(fmt)
        value: Scalar = struct.unpack_from(fmt, self.take(size))[0]
        return value

    def u32(self) -> int:
        return int(self.unpack("<I"))

    def u64(self) -> int:
        return int(self.unpack("<Q"))

    def string(self, cap: int) -> str:
        n = self.u64()
        if n > cap:
            raise InputError(f"{self.where}: a GGUF string of {n:,} bytes at offset {self.pos - 8:,} (more than "
                             f"{cap:,}): not a GGUF header this reader accepts")
        raw = self.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("utf-8", "replace")

    def skip_string(self) -> None:
        n = self.u64()
        self.take(n)


def _value(c: _Cursor, type_id: int, key: str) -> Scalar | list[Scalar] | ArrayInfo:
    if type_id in _SCALARS:
        return c.unpack(_SCALARS[type_id])
    if type_id == STRING:
        return c.string(1 << 26)
    if type_id != ARRAY:
        raise InputError(f"{c.where}: key {key!r} has GGUF value type {type_id}, which no GGUF version defines")
    item = c.u32()
    count = c.u64()
    if item == STRING:
        for _ in range(count):
            c.skip_string()
        return ArrayInfo(item, count)
    if item not in _SCALARS:
        raise InputError(f"{c.where}: key {key!r} is an array of value type {item}, which this reader does not read")
    size = struct.calcsize(_SCALARS[item])
    raw = c.take(size * count)  # Short before any allocation if the buffer lacks it
    if count > KEEP_ARRAY:
        return ArrayInfo(item, count)
    fmt = "<" + _SCALARS[item][1] * count
    return list(struct.unpack(fmt, raw))


def parse(buf: bytes, where: str) -> Header:
    """The header at the start of `buf`; `Short` when `buf` ends inside it, InputError when it is not a GGUF
    (`where` names the file in messages)."""
    c = _Cursor(buf, where)
    magic = c.take(4)
    if magic != MAGIC:
        raise InputError(f"{where}: not a GGUF file (it starts with {magic!r}, a GGUF with b'GGUF'); give the URL "
                         "of the .gguf file itself (Hugging Face: …/resolve/<revision>/<file>.gguf)")
    version = c.u32()
    if version not in (2, 3):
        raise InputError(f"{where}: GGUF version {version}; this reader reads versions 2 and 3")
    n_tensors, n_kv = c.u64(), c.u64()
    if n_tensors > MAX_COUNT or n_kv > MAX_COUNT:
        raise InputError(f"{where}: the header declares {n_tensors:,} tensors and {n_kv:,} key/values; more than "
                         f"{MAX_COUNT:,} is not a real model")
    kv: dict[str, Scalar | list[Scalar] | ArrayInfo] = {}
    for _ in range(n_kv):
        key = c.string(65535)
        kv[key] = _value(c, c.u32(), key)
    tensors = []
    for _ in range(n_tensors):
        name = c.string(65535)
        dims = c.u32()
        if dims > MAX_DIMS:
            raise InputError(f"{where}: tensor {name!r} has {dims} dimensions; ggml has at most {MAX_DIMS}")
        ne = tuple(c.u64() for _ in range(dims))
        type_id = c.u32()
        offset = c.u64()
        if type_id not in GGML_TYPE_TABLE:
            raise InputError(f"{where}: tensor {name!r} has ggml type {type_id}, which this reader does not know "
                             "(generator/schema/gguf.py GGML_TYPE_TABLE)")
        tensors.append(TensorInfo(name, ne, type_id, offset))
    align = kv.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(align, int) or isinstance(align, bool) or align <= 0 or align & (align - 1):
        raise InputError(f"{where}: general.alignment is {align!r}; it must be a power of two")
    data_offset = (c.pos + align - 1) // align * align
    return Header(version, kv, tuple(tensors), data_offset)


def parse_or_none(buf: bytes, where: str) -> Header | None:
    """`parse`, or None when `buf` is too short (the reader reads more)."""
    try:
        return parse(buf, where)
    except Short:
        return None


__all__ = ["ArrayInfo", "Header", "Short", "TensorInfo", "parse", "parse_or_none"]
