"""The WGWT weights blob and its manifest (format doc sections 3 and 4): writing from a plan,
reading with bounds checks.

Blob: `WGWT`, uint32 version 1, then the tensors back to back (no padding), raw
little-endian row-major bytes. The manifest (written by `WebnnPlan.manifest_json`) maps each
`@weights` key to `dataType`, `shape`, absolute `byteOffset` and `byteLength`.

Reading is lenient where the reference reader is: absent `format`/`version`/`endianness`/
`layout` take their only valid values, `dataType` may be a short name (`f32`), keys not found
are retried after sanitising (`::` -> `__`, `.` -> `_`, unique match only), and manifests whose
offsets are relative to the data area (smallest offset < 8) are accepted with a warning.
Everything else is a `WebnnFormatError` naming the file; every read is checked against the
blob's data area before any byte is read.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, TypeGuard

from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.plan import WebnnPlan, constant_bytes
from converter.io.serialize.source_types import SOURCE_TYPES_KEY, SourceTypes, parse_source_types
from converter.io.serialize.tables import (
    LONG_DTYPES,
    MANIFEST_FORMAT,
    WEIGHTS_HEADER_BYTES,
    WEIGHTS_MAGIC,
    WEIGHTS_VERSION,
)


def write_weights(plan_: WebnnPlan, stream: IO[bytes]) -> int:
    """Write the WGWT blob of `plan_` to `stream`; returns the number of bytes written."""
    stream.write(WEIGHTS_MAGIC + WEIGHTS_VERSION.to_bytes(4, "little"))
    written = WEIGHTS_HEADER_BYTES
    for c in plan_.blob_constants:
        if written != c.offset:  # pragma: no cover - the plan is contiguous
            raise AssertionError("weights plan is not contiguous")
        data = constant_bytes(c.operand)  # 4-bit constants packed two per byte
        stream.write(data)
        written += len(data)
    return written


@dataclass(frozen=True)
class TensorEntry:
    """One manifest entry; `offset` is absolute (after any relative-offset correction)."""

    key: str
    data_type: str | None
    shape: tuple[int, ...] | None
    offset: int
    length: int


@dataclass(frozen=True)
class Manifest:
    """A validated manifest: tensor entries, the original input/output names and the
    caller-side types of narrowed / widened inputs and outputs (`source_types`, keyed by
    identifier: `converter.io.serialize.source_types`)."""

    tensors: Mapping[str, TensorEntry]
    input_names: Mapping[str, str]
    output_names: Mapping[str, str]
    path: str
    source_types: SourceTypes | None = None

    def find(self, key: str) -> TensorEntry | None:
        """The entry of `key` (exact, else a unique sanitised match), or None."""
        entry = self.tensors.get(key)
        if entry is not None:
            return entry
        wanted = sanitize_key(key)
        matches = [e for k, e in self.tensors.items() if sanitize_key(k) == wanted]
        return matches[0] if len(matches) == 1 else None


def sanitize_key(key: str) -> str:
    """The key as other producers may have spelled it: `::` -> `__`, `.` -> `_`."""
    return key.replace("::", "__").replace(".", "_")


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


MANIFEST_RATIO = 16
"""A manifest may take `max_manifest_bytes` plus this many times its weights file."""


def check_manifest_size(size: int, weights_bytes: int | None, path: str) -> None:
    """Refuse a manifest of `size` bytes before it is parsed (`json.loads` takes about 16
    times the text in memory, and as long): over `max_manifest_bytes` (the active budgets,
    `converter.core.budgets`) plus `MANIFEST_RATIO` times the size of the weights file it
    describes (`weights_bytes`; None: no weights file). `BudgetExceeded` names the file."""
    from converter.core.budgets import active, format_bytes, over_budget

    budgets = active()
    limit = int(budgets.max_manifest_bytes) + MANIFEST_RATIO * max(weights_bytes or 0, 0)
    if size > limit:
        base = format_bytes(int(budgets.max_manifest_bytes))
        raise over_budget("max_manifest_bytes", size, limit,
                          f"{path}: the manifest of a {weights_bytes or 0:,}-byte weights "
                          f"file (at most {base} + {MANIFEST_RATIO} x its size) takes")


MAX_INT_DIGITS = 20
"""The most digits a manifest integer may have (offsets, lengths and dimensions are below
2**64, 20 digits); longer ones are refused before Python converts them."""


class _LongInteger(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _LongInteger(digits)
    return int(text)


def parse_manifest(text: str | bytes, path: str = "<manifest>", *,
                   weights_bytes: int | None = -1) -> Manifest:
    """Validate a manifest's structure (types, ranges); file bounds are checked on load.
    Its size is checked first (`check_manifest_size`) against the weights file of
    `weights_bytes` (None: none; -1, the default: not checked, for callers that checked)."""
    if weights_bytes is None or weights_bytes >= 0:
        check_manifest_size(len(text), weights_bytes, path)
    try:
        data = json.loads(text, parse_int=_bounded_int)
    except _LongInteger as e:
        raise WebnnFormatError(f"an integer with {e.digits} digits; manifest integers "
                               f"(offsets, lengths, dimensions) have at most {MAX_INT_DIGITS}",
                               path) from None
    except json.JSONDecodeError as e:
        raise WebnnFormatError(f"invalid JSON: {e.msg}", path, e.lineno, e.colno) from None
    except (UnicodeDecodeError, RecursionError) as e:
        raise WebnnFormatError(f"invalid JSON: {e}", path) from None
    if not isinstance(data, dict):
        raise WebnnFormatError("the manifest must be a JSON object", path)
    if data.get("format", MANIFEST_FORMAT) != MANIFEST_FORMAT:
        raise WebnnFormatError(f"format is {data.get('format')!r}, expected "
                               f"{MANIFEST_FORMAT!r}", path)
    if data.get("version", 1) != 1 or isinstance(data.get("version"), bool):
        raise WebnnFormatError(f"unsupported manifest version {data.get('version')!r}", path)
    if data.get("endianness", "little") != "little":
        raise WebnnFormatError(f"unsupported endianness {data.get('endianness')!r}", path)
    tensors = data.get("tensors", {})
    if not isinstance(tensors, dict):
        raise WebnnFormatError("'tensors' must be an object", path)
    entries: dict[str, TensorEntry] = {}
    for key, item in tensors.items():
        if not isinstance(item, dict):
            raise WebnnFormatError(f"tensor {key!r}: entry must be an object", path)
        off, length = item.get("byteOffset"), item.get("byteLength")
        if not _is_int(off) or not _is_int(length) or off < 0 or length < 0:
            raise WebnnFormatError(f"tensor {key!r}: byteOffset and byteLength must be "
                                   f"non-negative integers, got {off!r}, {length!r}", path)
        dt = item.get("dataType")
        if dt is not None and not isinstance(dt, str):
            raise WebnnFormatError(f"tensor {key!r}: dataType must be a string", path)
        shape = item.get("shape")
        if shape is not None:
            if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
                raise WebnnFormatError(f"tensor {key!r}: shape must be a list of non-negative "
                                       "integers", path)
            shape = tuple(shape)
        if item.get("layout", "row-major") != "row-major":
            raise WebnnFormatError(f"tensor {key!r}: unsupported layout {item.get('layout')!r}",
                                   path)
        entries[key] = TensorEntry(key, LONG_DTYPES.get(dt, dt) if dt else None, shape, off,
                                   length)
    if entries and min(e.offset for e in entries.values()) < WEIGHTS_HEADER_BYTES:
        warnings.warn(f"{path}: byte offsets look relative to the data area (smallest < "
                      f"{WEIGHTS_HEADER_BYTES}); reading them after the WGWT header",
                      stacklevel=2)
        entries = {k: TensorEntry(e.key, e.data_type, e.shape, e.offset + WEIGHTS_HEADER_BYTES,
                                  e.length) for k, e in entries.items()}
    names = data.get("names", {})
    if not isinstance(names, dict):
        raise WebnnFormatError("'names' must be an object", path)
    maps: list[dict[str, str]] = []
    for section in ("inputs", "outputs"):
        m = names.get(section, {})
        if not isinstance(m, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                              for k, v in m.items()):
            raise WebnnFormatError(f"names.{section} must map identifiers to non-empty "
                                   "strings", path)
        maps.append(dict(m))
    types = data.get(SOURCE_TYPES_KEY)
    return Manifest(entries, maps[0], maps[1], path,
                    None if types is None else parse_source_types(types, path))


class WeightsBlob:
    """Random access to a WGWT blob with bounds checks: in memory (`data`) or an open binary
    `file` of `size` bytes, read slice by slice. The header is checked on construction."""

    def __init__(self, data: bytes | None, file: IO[bytes] | None, size: int, path: str) -> None:
        self.data = data
        self.file = file
        self.size = size
        self.path = path
        header = data[:WEIGHTS_HEADER_BYTES] if data is not None else self._read_raw(
            0, min(size, WEIGHTS_HEADER_BYTES))
        if len(header) < WEIGHTS_HEADER_BYTES:
            raise WebnnFormatError(f"weights file is {size} bytes, shorter than its "
                                   f"{WEIGHTS_HEADER_BYTES}-byte header", path)
        if header[:4] != WEIGHTS_MAGIC:
            raise WebnnFormatError(f"not a WGWT weights file (magic {header[:4]!r})", path)
        version = int.from_bytes(header[4:8], "little")
        if version != WEIGHTS_VERSION:
            raise WebnnFormatError(f"unsupported weights version {version} (expected "
                                   f"{WEIGHTS_VERSION})", path)

    def _read_raw(self, offset: int, length: int) -> bytes:
        assert self.file is not None
        self.file.seek(offset)
        return self.file.read(length)

    def read(self, offset: int, length: int, what: str) -> bytes:
        """`length` bytes at absolute `offset`; outside the data area is a WebnnFormatError
        naming `what`."""
        if offset < WEIGHTS_HEADER_BYTES or offset + length > self.size:
            raise WebnnFormatError(f"{what}: bytes [{offset}, {offset + length}) are outside "
                                   f"the data area [{WEIGHTS_HEADER_BYTES}, {self.size}) of "
                                   "the weights file", self.path)
        if self.data is not None:
            return self.data[offset:offset + length]
        raw = self._read_raw(offset, length)
        if len(raw) != length:  # pragma: no cover - the file changed under us
            raise WebnnFormatError(f"{what}: short read", self.path)
        return raw


__all__ = ["Manifest", "TensorEntry", "WeightsBlob", "parse_manifest", "sanitize_key",
           "write_weights"]
