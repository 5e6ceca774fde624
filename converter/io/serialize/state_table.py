"""The manifest's `state` table: the carried states of a streaming graph
(`converter.results.state.StatePair`), so that an export keeps them (docs/state.md).

```json
"state": [{"input": "stream/ring_buffer", "output": "new_state", "dataType": "float32",
           "shape": [1, 3, 8], "initial": {"fill": 0.25}}]
```

`input` / `output` are the graph's identifiers (the manifest's `names` table maps renamed
ones back); `initial` is `{"fill": number}` for a uniform value (zeros: `{"fill": 0}`) or
`{"base64": little-endian bytes}`. `read_state` gives the pairs back with original names;
`load_state(folder or manifest path)` reads them from an export.

Restrictions (a `WebnnFormatError` naming the file): entries must name declared inputs and
outputs of equal data type and shape; a base64 value must decode to exactly the shape's bytes
and at most `MAX_STATE_BYTES`; only numeric data types numpy names (no 4-bit types).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.files import FileTooLarge, read_bounded
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.tables import MAX_MANIFEST_BYTES
from converter.results.state import StatePair

STATE_KEY = "state"
MAX_STATE_BYTES = 64 << 20
"""The largest initial value a manifest may hold."""
_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")


def _ident(names: Mapping[str, str], original: str) -> str:
    for ident, name in names.items():
        if name == original:
            return ident
    return original


def state_entries(state: Sequence[StatePair], input_names: Mapping[str, str],
                  output_names: Mapping[str, str]) -> list[dict[str, Any]]:
    """The manifest entries of `state` (`input_names` / `output_names`: identifier ->
    original name, as the plan has them)."""
    out = []
    for pair in state:
        arr = np.ascontiguousarray(pair.initial)
        flat = arr.reshape(-1)
        if flat.size and np.all(flat == flat[0]) and not (arr.dtype.kind == "f"
                                                           and np.isnan(flat[0])):
            value = flat[0].item()
            initial: dict[str, Any] = {"fill": value}
        else:
            raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
            initial = {"base64": base64.b64encode(raw).decode("ascii")}
        out.append({"input": _ident(input_names, pair.input),
                    "output": _ident(output_names, pair.output), "dataType": arr.dtype.name,
                    "shape": list(arr.shape), "initial": initial})
    return out


def read_state(manifest: Mapping[str, Any], path: str) -> tuple[StatePair, ...]:
    """The pairs of a parsed manifest's `state` table with original names (none when the key
    is absent); `WebnnFormatError` naming `path` for a malformed table."""
    entries = manifest.get(STATE_KEY, [])
    if not isinstance(entries, list):
        raise WebnnFormatError(f"{STATE_KEY} must be a list", path)
    names = manifest.get("names", {}) if isinstance(manifest.get("names"), dict) else {}
    inputs = names.get("inputs", {}) if isinstance(names.get("inputs"), dict) else {}
    outputs = names.get("outputs", {}) if isinstance(names.get("outputs"), dict) else {}
    pairs = []
    for i, e in enumerate(entries):
        where = f"{STATE_KEY}[{i}]"
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str)
                                              for k in ("input", "output", "dataType")):
            raise WebnnFormatError(f"{where} needs input, output and dataType strings", path)
        dtype = e["dataType"]
        shape = e.get("shape")
        if dtype not in _TYPES:
            raise WebnnFormatError(f"{where}: data type {dtype!r} is not one of "
                                   f"{', '.join(_TYPES)}", path)
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                  and 1 <= d for d in shape):
            raise WebnnFormatError(f"{where}: shape must be a list of positive integers", path)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count * np.dtype(dtype).itemsize > MAX_STATE_BYTES:
            raise WebnnFormatError(f"{where}: the initial value is over {MAX_STATE_BYTES} "
                                   "bytes", path)
        pairs.append(StatePair(str(inputs.get(e["input"], e["input"])),
                               str(outputs.get(e["output"], e["output"])),
                               _initial(e.get("initial"), dtype, shape, count, where, path),
                               "export"))
    return tuple(pairs)


def _initial(initial: Any, dtype: str, shape: list[int], count: int, where: str, path: str
             ) -> np.ndarray:
    if isinstance(initial, dict) and set(initial) == {"fill"} \
            and isinstance(initial["fill"], (int, float)) \
            and not isinstance(initial["fill"], bool):
        return np.full(shape, initial["fill"], dtype)
    if isinstance(initial, dict) and set(initial) == {"base64"} \
            and isinstance(initial["base64"], str):
        try:
            raw = base64.b64decode(initial["base64"], validate=True)
        except (binascii.Error, ValueError):
            raise WebnnFormatError(f"{where}: initial.base64 is not base64", path) from None
        little = np.dtype(dtype).newbyteorder("<")
        if len(raw) != count * little.itemsize:
            raise WebnnFormatError(f"{where}: initial value has {len(raw)} bytes, the shape "
                                   f"{shape} of {dtype} needs {count * little.itemsize}", path)
        return np.frombuffer(raw, little).astype(dtype).reshape(shape)
    raise WebnnFormatError(f"{where}: initial must be {{\"fill\": number}} or "
                           "{\"base64\": text}", path)


def load_state(path: str | os.PathLike[str]) -> tuple[StatePair, ...]:
    """The carried states of an export: `path` is its folder (its `*.manifest.json`, one
    stem) or a manifest file. () when there is no manifest or no table."""
    p = Path(path)
    if p.is_dir():
        found = sorted(p.glob("*.manifest.json"))
        if not found:
            return ()
        p = found[0]
    try:
        data = json.loads(read_bounded(p, MAX_MANIFEST_BYTES, "the manifest"))
    except (FileTooLarge, OSError) as e:
        raise WebnnFormatError(f"cannot read the manifest ({e})", str(p)) from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise WebnnFormatError(f"invalid JSON ({e})", str(p)) from None
    if not isinstance(data, dict):
        raise WebnnFormatError("the manifest must be a JSON object", str(p))
    return read_state(data, str(p))


__all__ = ["MAX_STATE_BYTES", "STATE_KEY", "load_state", "read_state", "state_entries"]
