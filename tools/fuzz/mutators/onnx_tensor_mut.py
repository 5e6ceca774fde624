"""ONNX tensor mutations: dims (negative, zero, huge, rank changes), data types (unknown,
mismatched with the data), data (raw_data truncated or padded, typed fields swapped) and the
values of shape-like tensors (the inputs of Reshape / Expand / Tile / ConstantOfShape / Range
/ Pad / Slice ...: negative, huge, zero)."""

from __future__ import annotations

import random

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from tools.fuzz.mutators.base import Mutation
from tools.fuzz.mutators.common import evil_float, evil_int
from tools.fuzz.mutators.onnx_walk import DTYPES, NUM_FIELDS, tensors


def _raw(t: onnx.TensorProto) -> bool:
    return bool(t.HasField("raw_data"))


def tensor_dims(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    ts = tensors(model)
    if not ts:
        return None
    t = rng.choice(ts)
    how = rng.choice(["dim", "dim", "drop", "add", "huge", "scalar"])
    if how == "dim" and t.dims:
        t.dims[rng.randrange(len(t.dims))] = evil_int(rng)
    elif how == "drop" and t.dims:
        del t.dims[-1]
    elif how == "huge":
        t.dims[:] = [2**31, 2**31] if rng.random() < 0.5 else [2**62, 4]
    elif how == "scalar":
        del t.dims[:]
    else:
        t.dims.append(rng.choice([0, 1, 2, 7]))
    return f"{t.name}:{how}"


def tensor_dtype(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    ts = tensors(model)
    if not ts:
        return None
    t = rng.choice(ts)
    t.data_type = rng.choice(DTYPES)
    return f"{t.name}:{t.data_type}"


def tensor_data(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Truncate / extend / drop / duplicate the stored data."""
    ts = tensors(model)
    if not ts:
        return None
    t = rng.choice(ts)
    how = rng.choice(["truncate", "truncate", "extend", "clear", "both", "typed-len"])
    if _raw(t):
        raw = t.raw_data
        if how == "truncate":
            t.raw_data = raw[:rng.choice([0, 1, len(raw) // 2, max(0, len(raw) - 1)])]
        elif how == "extend":
            t.raw_data = raw + b"\x00" * rng.choice([1, 4, 4096])
        elif how == "clear":
            t.ClearField("raw_data")
        elif how == "both":
            t.float_data.extend([1.0, 2.0])
        else:
            t.raw_data = raw[:len(raw) - len(raw) % 4 + 1] if raw else b"\x01"
        return f"{t.name}:raw-{how}"
    fields = [f for f in NUM_FIELDS if len(getattr(t, f))]
    if not fields:
        t.raw_data = b"\x01\x02\x03"
        return f"{t.name}:raw-added"
    field = getattr(t, rng.choice(fields))
    if how in ("truncate", "clear"):
        del field[len(field) // 2 if how == "truncate" else 0:]
    elif how == "both":
        t.raw_data = b"\x00" * 8
    else:
        field.extend([field[0]] * rng.choice([1, 3, 1000]))
    return f"{t.name}:typed-{how}"


def tensor_values(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Set an element of a (preferably shape-like integer) tensor to an extreme value:
    trip counts, shapes, repeats, pads, depths, axes, scales."""
    ts = [t for t in tensors(model) if t.data_location != TensorProto.EXTERNAL]
    ints = [t for t in ts if t.data_type in (TensorProto.INT64, TensorProto.INT32)]
    floats = [t for t in ts if t.data_type in (TensorProto.FLOAT, TensorProto.DOUBLE)]
    pool = ints if ints and (rng.random() < 0.7 or not floats) else floats
    if not pool:
        return None
    t = rng.choice(pool)
    try:
        arr = numpy_helper.to_array(t).copy()
    except Exception:  # noqa: BLE001 - an earlier mutation broke it: leave it
        return None
    if arr.size == 0:
        return None
    flat = arr.reshape(-1)
    i = rng.randrange(flat.size)
    if arr.dtype.kind in "iu":
        bits = arr.dtype.itemsize * 8
        flat[i] = evil_int(rng, int(flat[i]), bits=bits)
        if rng.random() < 0.2:
            flat[:] = flat[i]
    else:
        with np.errstate(over="ignore"):
            flat[i] = evil_float(rng)
    new = numpy_helper.from_array(arr, t.name)
    t.CopyFrom(new)
    return f"{t.name}[{i}]={flat[i]}"
