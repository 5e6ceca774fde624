"""`.safetensors` weights for the webnn-graph format (format doc section 5): the alternative to
the WGWT blob + manifest, written and read with the `safetensors` package (numpy API).

Writing: one tensor per `@weights` constant of the plan (the key is the `@weights`
reference, i.e. the constant's identifier), little-endian, with the same placement decisions
as the blob (`@scalar` / `@bytes` constants stay in the graph file). When some graph input or
output name is not a valid identifier, the original names travel in the archive's metadata
under `NAMES_METADATA_KEY` (JSON text `{"inputs": {identifier: original}, "outputs": {...}}`,
the same table the manifest's `"names"` holds); other readers ignore it. Likewise the
manifest's `"sourceDataTypes"` (the caller-side types of a target's narrowed / widened inputs
and outputs, `converter.io.serialize.source_types`) under `SOURCE_TYPES_METADATA_KEY`.

Reading: `SafetensorsWeights(path)` opens the archive once with `safe_open(framework="np")`
(the package checks that the header and the data offsets cover the file exactly, so a
truncated file is refused before any tensor is read) and hands out tensors one at a time:
the declared dtype and shape are compared with the header's before the tensor is read, and
only that tensor's bytes are copied. Dtypes must match the declaration (`F32`, `F16`, `I32`,
`U32`, `I64`, `U64`, `I8`, `U8`); `BF16` is accepted for a `float32` constant (widened
exactly). Keys not found are retried after sanitising (`::` -> `__`, `.` -> `_`, unique match
only), as for manifests. safetensors has no 4-bit dtypes: int4/uint4 constants are stored as
`I8`/`U8` tensors of the same shape, one value per byte (twice the packed size of the blob),
and read back with a range check.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, cast

import numpy as np

from converter.core.files import NotRegularFile, open_regular, read_at
from converter.core.webnn.dtypes import STORAGE_TYPES, numpy_dtype
from converter.io.serialize.errors import WebnnFormatError, WeightsMismatch
from converter.io.serialize.plan import WebnnPlan
from converter.io.serialize.source_types import (
    SOURCE_TYPES_KEY,
    SOURCE_TYPES_METADATA_KEY,
    source_types_metadata,
)
from converter.io.serialize.weights import sanitize_key

SAFETENSORS_DTYPES: dict[str, str] = {
    "float32": "F32", "float16": "F16", "int32": "I32", "uint32": "U32", "int64": "I64",
    "uint64": "U64", "int8": "I8", "uint8": "U8",
}
_NUMPY_OF = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "U32": "<u4", "I64": "<i8",
             "U64": "<u8", "I8": "i1", "U8": "u1"}
"""The (little-endian) numpy type of each safetensors dtype of SAFETENSORS_DTYPES."""
NAMES_METADATA_KEY = "webnn.names"
# safetensors refuses headers above 100 MB; read no more than that ourselves either.
MAX_HEADER_BYTES = 100_000_000


def plan_tensors(plan_: WebnnPlan) -> dict[str, np.ndarray]:
    """The `@weights` tensors of `plan_` by key, C-contiguous little-endian (views when the
    stored arrays already are)."""
    out: dict[str, np.ndarray] = {}
    for c in plan_.blob_constants:
        arr = c.operand.value
        assert arr is not None
        if arr.dtype.name not in SAFETENSORS_DTYPES:  # pragma: no cover - numpy storage
            raise ValueError(f"constant {c.ident}: {arr.dtype} has no safetensors dtype")
        out[c.ident] = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    return out


def names_metadata(plan_: WebnnPlan) -> dict[str, str] | None:
    """The metadata carrying renamed input/output names and the caller-side types of
    narrowed / widened inputs and outputs, or None when there is neither."""
    manifest = plan_.manifest()
    out = {key: json.dumps(manifest[entry], ensure_ascii=False)
           for key, entry in ((NAMES_METADATA_KEY, "names"),
                              (SOURCE_TYPES_METADATA_KEY, SOURCE_TYPES_KEY))
           if manifest.get(entry)}
    return out or None


def write_safetensors(plan_: WebnnPlan, path: str | os.PathLike[str]) -> Path:
    """Write the `@weights` tensors of `plan_` (and the renamed-names metadata) to `path`."""
    from safetensors.numpy import save_file

    path = Path(path)
    save_file(plan_tensors(plan_), str(path), metadata=names_metadata(plan_))
    return path


def _names(metadata: Mapping[str, str] | None, path: str
           ) -> tuple[Mapping[str, str], Mapping[str, str]] | None:
    text = (metadata or {}).get(NAMES_METADATA_KEY)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise WebnnFormatError(f"metadata {NAMES_METADATA_KEY}: invalid JSON ({e})",
                               path) from None
    maps: list[dict[str, str]] = []
    for section in ("inputs", "outputs"):
        m = data.get(section, {}) if isinstance(data, dict) else None
        if not isinstance(m, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                              for k, v in m.items()):
            raise WebnnFormatError(f"metadata {NAMES_METADATA_KEY}: {section} must map "
                                   "identifiers to non-empty strings", path)
        maps.append(dict(m))
    return maps[0], maps[1]


class SafetensorsWeights:
    """A `.safetensors` archive opened for reading tensor by tensor (a context manager;
    implements `graph_builder.TensorSource`). `names` is the (inputs, outputs) renaming table
    from the metadata, or None; `source_types` the (inputs, outputs) caller-side types, or
    None."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from safetensors import SafetensorError, safe_open

        self.path = str(path)
        self._data: BinaryIO | None = None
        try:  # tensors are read from this descriptor (safe_open maps the file: a file
            # truncated while mapped would be a SIGBUS), the header through safe_open
            self._data = open_regular(self.path, "the safetensors weights file")
            self._size = os.fstat(self._data.fileno()).st_size
            self._handle: Any = cast(Any, safe_open(self.path, framework="np"))
            self._file = self._handle.__enter__()
            keys = list(self._file.keys())
            metadata = self._file.metadata()
        except OSError as e:
            self.close()
            reason = e.strerror if isinstance(e, NotRegularFile) else f"cannot read: {e.strerror}"
            raise WebnnFormatError(str(reason), self.path) from None
        except SafetensorError as e:
            self.close()
            raise WebnnFormatError(f"not a valid safetensors file (truncated or corrupt?): "
                                   f"{e}", self.path) from None
        self.keys = frozenset(keys)
        self.names = _names(metadata, self.path)
        self.source_types = source_types_metadata(
            (metadata or {}).get(SOURCE_TYPES_METADATA_KEY), self.path)
        self._offsets: dict[str, Any] | None = None

    def __enter__(self) -> SafetensorsWeights:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Release the archive (idempotent)."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle is not None:
            handle.__exit__(None, None, None)
        data, self._data = getattr(self, "_data", None), None
        if data is not None:
            data.close()

    def find(self, key: str) -> str | None:
        """The archive key for `@weights` reference `key` (exact, else a unique sanitised
        match), or None."""
        if key in self.keys:
            return key
        wanted = sanitize_key(key)
        matches = [k for k in self.keys if sanitize_key(k) == wanted]
        return matches[0] if len(matches) == 1 else None

    def get(self, key: str, data_type: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor for `@weights(key)` declared `data_type`/`shape`; raises
        WeightsMismatch when it is missing or disagrees with the declaration."""
        found = self.find(key)
        if found is None:
            raise WeightsMismatch(f"weights key {key!r} is not in {self.path}")
        view = self._file.get_slice(found)
        st_dtype = view.get_dtype()
        st_shape = tuple(view.get_shape())
        if st_shape != tuple(shape):
            raise WeightsMismatch(f"safetensors tensor {found!r} has shape {list(st_shape)}, "
                                  f"the declaration {list(shape)} ({self.path})")
        wanted = SAFETENSORS_DTYPES.get(STORAGE_TYPES.get(data_type, data_type))
        if st_dtype == "BF16" and data_type == "float32":
            return self._bf16_as_float32(found, shape)
        if st_dtype != wanted:
            need = wanted or "no safetensors dtype"
            raise WeightsMismatch(f"safetensors tensor {found!r} is {st_dtype}, the "
                                  f"declaration is {data_type} (needs {need}) ({self.path})")
        begin, end = self._data_offsets(found)
        stored = np.dtype(_NUMPY_OF[st_dtype])
        if end - begin != stored.itemsize * int(np.prod(shape, dtype=np.int64)):
            raise WebnnFormatError(f"tensor {found!r}: {end - begin} bytes for "
                                   f"{list(shape)} {st_dtype}", self.path)
        raw = self._read(begin, end, found)
        arr = np.frombuffer(memoryview(raw).toreadonly(), stored)  # kept uncopied
        return arr.astype(numpy_dtype(data_type), copy=False).reshape(shape)

    def _read(self, begin: int, end: int, key: str) -> bytearray:
        """Bytes [begin, end) of the archive, copied (`converter.core.files.read_at`)."""
        assert self._data is not None
        try:
            return read_at(self._data, begin, end - begin, self.path, f"tensor {key!r}")
        except OSError as e:
            raise WebnnFormatError(str(e.strerror), self.path) from None

    def _bf16_as_float32(self, key: str, shape: tuple[int, ...]) -> np.ndarray:
        """numpy has no bfloat16: read the raw bytes (offsets from the header the package
        has validated) and widen them exactly (bfloat16 is the top half of float32)."""
        begin, end = self._data_offsets(key)
        raw = self._read(begin, end, key)
        bits = np.frombuffer(raw, "<u2").astype(np.uint32) << np.uint32(16)
        return bits.view(np.float32).reshape(shape)

    def _data_offsets(self, key: str) -> tuple[int, int]:
        if self._offsets is None:
            n = int.from_bytes(self._read(0, 8, "(header size)"), "little")
            if n > min(MAX_HEADER_BYTES, self._size - 8):  # pragma: no cover - validated
                raise WebnnFormatError("safetensors header larger than the file",
                                       self.path)
            header = json.loads(bytes(self._read(8, 8 + n, "(header)")))
            self._offsets = {"__data__": 8 + n, **header}
        base = self._offsets["__data__"]
        begin, end = self._offsets[key]["data_offsets"]
        return base + int(begin), base + int(end)


__all__ = ["NAMES_METADATA_KEY", "SAFETENSORS_DTYPES", "SafetensorsWeights", "names_metadata",
           "plan_tensors", "write_safetensors"]
