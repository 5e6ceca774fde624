"""Seeded, reproducible validation inputs for a source graph.

Rules, per graph input (each input draws from its own generator seeded with `seed` and the
input's name, so overriding one input does not change the others):

- inputs given in `overrides` are used as they are (cast to the input's dtype with
  `converter.core.feeds.source_array`, shape checked);
- names that look like attention masks (``mask`` in the name) are ones;
- names that look like token type ids (``token_type``/``segment``) are zeros;
- names that look like position ids (``position``) count 0, 1, 2, ... along the last axis;
- integer inputs that feed a Gather / GatherElements / EMBEDDING_LOOKUP / GATHER (directly or
  through Cast, Reshape, Squeeze, Unsqueeze, Flatten, Identity) stay below the size of the
  gathered table's axis (when the table is a constant); other integers lie in [0, 10);
  quantized TFLite inputs (int8/uint8 with quantization parameters) span their whole range;
- bool inputs are random booleans;
- float inputs are uniform in [0, 1] for image-like tensors (rank 4 with 1, 3 or 4 channels
  first or last, and spatial sides >= 8), else uniform in [-1, 1].
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.budgets import active, nbytes
from converter.core.errors import InvalidModel
from converter.core.feeds import source_array

DEFAULT_INT_HIGH = 10
_PASS_THROUGH = {"Cast", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "CAST",
                 "RESHAPE", "SQUEEZE", "EXPAND_DIMS"}


def _consumers(source: Any) -> dict[str, list[tuple[Any, int]]]:
    out: dict[str, list[tuple[Any, int]]] = {}
    for node in source.nodes:
        for i, name in enumerate(node.inputs):
            if name:
                out.setdefault(name, []).append((node, i))
    return out


def _table_bound(source: Any, name: str, consumers: Mapping[str, list[tuple[Any, int]]],
                 depth: int = 0) -> int | None:
    """The smallest table size an integer value indexes into, or None when unknown."""
    if depth > 8:
        return None
    bounds: list[int] = []
    for node, idx in consumers.get(name, ()):
        op = node.op_type
        table: str | None = None
        axis = 0
        if op in ("Gather", "GatherElements") and idx == 1:
            table, axis = node.input(0), int(node.attrs.get("axis", 0))
        elif op == "GATHER" and idx == 1:
            table, axis = node.input(0), int(node.attrs.get("axis", 0))
        elif op == "EMBEDDING_LOOKUP" and idx == 0:
            table, axis = node.input(1), 0
        elif op in _PASS_THROUGH and idx == 0:
            for out in node.outputs:
                b = _table_bound(source, out, consumers, depth + 1)
                if b is not None:
                    bounds.append(b)
            continue
        if table is not None:
            shape = _shape_of(source, table)
            if shape is not None and shape:
                bounds.append(int(shape[axis % len(shape)]))
    return min(bounds) if bounds else None


def _shape_of(source: Any, name: str) -> tuple[int, ...] | None:
    if name in source.constants:
        return tuple(int(d) for d in np.shape(source.constants[name]))
    tensors = getattr(source, "tensors", None) or {}
    info = tensors.get(name)
    if info is not None and getattr(info, "shape", None) is not None:
        return tuple(int(d) for d in info.shape)
    return None


def _image_like(shape: tuple[int, ...]) -> bool:
    if len(shape) != 4:
        return False
    if shape[1] in (1, 3, 4) and min(shape[2], shape[3]) >= 8:
        return True
    return shape[3] in (1, 3, 4) and min(shape[1], shape[2]) >= 8


def _quantized(source: Any, name: str) -> bool:
    tensors = getattr(source, "tensors", None) or {}
    info = tensors.get(name)
    return bool(info is not None and getattr(info, "quantized", False))


def generate_input(source: Any, name: str, dtype: str, shape: tuple[int, ...],
                   rng: np.random.Generator,
                   consumers: Mapping[str, list[tuple[Any, int]]] | None = None
                   ) -> np.ndarray:
    """One input following the rules of the module docstring."""
    lname = name.lower()
    if consumers is None:
        consumers = _consumers(source)
    if dtype == "bool":
        if "mask" in lname:
            return np.ones(shape, dtype=bool)
        return rng.integers(0, 2, size=shape).astype(bool)
    if "mask" in lname:
        return np.ones(shape, dtype=dtype)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        if re.search(r"token_?type|segment", lname):
            return np.zeros(shape, dtype=dtype)
        if "position" in lname and shape:
            return np.broadcast_to(np.arange(shape[-1]), shape).astype(dtype)
        if _quantized(source, name) and np.dtype(dtype).itemsize == 1:
            info = np.iinfo(dtype)
            return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)
        high = _table_bound(source, name, consumers) or DEFAULT_INT_HIGH
        return rng.integers(0, max(1, high), size=shape).astype(dtype)
    if kind == "f":
        low = 0.0 if _image_like(shape) else -1.0
        return rng.uniform(low, 1.0, size=shape).astype(dtype)
    raise InvalidModel(f"cannot generate a value for input {name!r} of data type {dtype}; "
                       "give it with --inputs")


def make_inputs(source: Any, seed: int = 0,
                overrides: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Inputs for every graph input of `source` (a SourceGraph with static input shapes),
    keyed by input name in graph order. Unknown names in `overrides` raise `InvalidModel`; a
    generated input larger than the active `max_constant_bytes` budget raises
    `BudgetExceeded` before it is allocated."""
    overrides = dict(overrides or {})
    names = [vi.name for vi in source.inputs]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise InvalidModel(f"--inputs names {unknown}, which are not graph inputs "
                           f"(inputs: {names})")
    consumers = _consumers(source)
    out: dict[str, np.ndarray] = {}
    for vi in source.inputs:
        shape = tuple(int(d) for d in (vi.shape or ()))
        if vi.name in overrides:
            arr = np.asarray(overrides[vi.name])
            if arr.shape != shape:
                raise InvalidModel(f"--inputs: {vi.name!r} has shape {list(arr.shape)}, the "
                                   f"model expects {list(shape)}")
            try:
                out[vi.name] = source_array(arr, vi.dtype)
            except (TypeError, ValueError) as exc:
                raise InvalidModel(f"--inputs: {vi.name!r} cannot be cast to {vi.dtype}: "
                                   f"{exc}") from exc
            continue
        child = np.random.default_rng([seed, zlib.crc32(vi.name.encode())])
        try:
            itemsize = np.dtype(vi.dtype).itemsize
        except TypeError:  # a type numpy lacks: generate_input says so
            itemsize = 1
        active().check("max_constant_bytes", nbytes(shape, itemsize),
                       f"the generated value of input {vi.name!r} would take")
        out[vi.name] = generate_input(source, vi.name, vi.dtype, shape, child, consumers)
    return out
