"""The graph inputs of an ONNX model: their declared types and shapes (`value_info`), the
dimensions the settings fix (`resolve_inputs`: `input_shapes`, `input_dims`, `free_dims`)
and the inputs pinned to constants (`pin_values`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from converter.core.errors import InvalidModel, UnresolvedDimensions, exception_text, quoted
from converter.core.fixes import Fix
from converter.core.ir import Dim, ValueInfo
from converter.frontends.free_dims import (
    DimKey,
    InputDims,
    batch_defaults,
    check_free_dim_values,
    check_input_dims,
    default_note,
    fixes_for,
)
from op_mappings.onnx._element_types import elem_type_name


def value_info(vi: onnx.ValueInfoProto) -> ValueInfo:
    """A graph input or output as the model declares it (dimensions: ints, `dim_param`
    names, None for unnamed free ones; non-tensor types by their kind)."""
    t = vi.type
    if not t.HasField("tensor_type"):
        kind = t.WhichOneof("value") or "unknown"
        return ValueInfo(vi.name, kind, None, None)
    tt = t.tensor_type
    dtype = elem_type_name(tt.elem_type)
    if not tt.HasField("shape"):
        return ValueInfo(vi.name, dtype, None, None)
    dims: list[Dim] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return ValueInfo(vi.name, dtype, tuple(dims), tuple(dims))


_IMAGE_SIZE_KEYS = frozenset({"imgsz", "img_size", "image_size", "imagesize", "input_size"})
"""Metadata keys holding an image input's [height, width] (ultralytics writes `imgsz`)."""
_HEIGHT_NAMES = frozenset({"height", "h", "image_height", "img_h", "in_h"})
_WIDTH_NAMES = frozenset({"width", "w", "image_width", "img_w", "in_w"})


def implied_sizes(proto: onnx.ModelProto, declared: Sequence[ValueInfo]
                  ) -> dict[DimKey, int]:
    """Sizes the model itself implies for free input dimensions: a `value_info` entry for the
    input with a fixed size at that axis; a `metadata_props` entry named as the dimension
    (`"height": "640"`); an image-size entry (`imgsz`, `image_size`, ...: `[640, 640]` or
    `640`) for the height/width dimensions of a rank-4 image input (NCHW or NHWC with 1, 3
    or 4 channels) or dimensions named height/width. Unparsable entries are ignored."""
    out: dict[DimKey, int] = {}
    by_name = {vi.name: vi for vi in declared}
    for vi in proto.graph.value_info:
        have = by_name.get(vi.name)
        if have is None or have.shape is None:
            continue
        known = value_info(vi).shape or ()
        if len(known) != len(have.shape):
            continue
        for axis, (d, k) in enumerate(zip(have.shape, known, strict=True)):
            if not isinstance(d, int) and isinstance(k, int) and k >= 1:
                out.setdefault(d if isinstance(d, str) else (vi.name, axis), k)
    meta = {p.key.lower(): p.value for p in proto.metadata_props}
    for vi in declared:
        for d in vi.shape or ():
            if isinstance(d, str) and d.lower() in meta:
                sizes = _ints(meta[d.lower()])
                if len(sizes) == 1:
                    out.setdefault(d, sizes[0])
    image = next((_ints(meta[k]) for k in sorted(_IMAGE_SIZE_KEYS) if k in meta), [])
    if len(image) in (1, 2):
        height, width = image[0], image[-1]
        for vi in declared:
            shape = vi.shape or ()
            spatial: tuple[int, int] | None = None
            if len(shape) == 4 and shape[1] in (1, 3, 4):
                spatial = (2, 3)
            elif len(shape) == 4 and shape[3] in (1, 3, 4):
                spatial = (1, 2)
            for axis, d in enumerate(shape):
                size = None
                if spatial is not None and axis in spatial:
                    size = height if axis == spatial[0] else width
                elif isinstance(d, str) and d.lower() in _HEIGHT_NAMES | _WIDTH_NAMES:
                    size = height if d.lower() in _HEIGHT_NAMES else width
                if size is not None and not isinstance(d, int):
                    out.setdefault(d if isinstance(d, str) else (vi.name, axis), size)
    return out


def _ints(text: str) -> list[int]:
    """The positive integers of a metadata value such as `640`, `[640, 640]`, `(480,640)`;
    [] when it holds anything else."""
    parts = text.strip().strip("[]()").replace(",", " ").split()
    if not parts or not all(p.isdigit() for p in parts):
        return []
    sizes = [int(p) for p in parts]
    return sizes if all(1 <= v <= 1 << 20 for v in sizes) else []


def resolve_inputs(declared: list[ValueInfo], free_dims: Mapping[str, int],
                   input_shapes: Mapping[str, Sequence[int]], label: str,
                   input_dims: InputDims | None = None,
                   suggested: Mapping[DimKey, int] | None = None
                   ) -> tuple[list[ValueInfo], tuple[str, ...]]:
    """The graph inputs with every dimension fixed: `input_shapes` (whole shapes), then
    `input_dims` (by input and axis), then `free_dims` (by name), then 1 for the dimensions
    `batch_defaults` takes as a batch; and the report note on those. InvalidModel for
    settings naming nothing or contradicting the model, `UnresolvedDimensions` (with fixes,
    their values from `suggested` where the model implies one) for dimensions still
    free."""
    names = {vi.name for vi in declared}
    unknown_inputs = sorted(set(input_shapes) - names)
    if unknown_inputs:
        raise InvalidModel(f"shape(s) given for {unknown_inputs}, which are not graph inputs "
                           f"of {label} (inputs: {sorted(names)})")
    params = {d for vi in declared for d in (vi.shape or ()) if isinstance(d, str)}
    unknown_params = sorted(set(free_dims) - params)
    if unknown_params:
        raise InvalidModel(f"dimension name(s) {unknown_params} given, which are not free "
                           f"dimensions of {label} (free dimensions: {sorted(params)})")
    check_free_dim_values(free_dims)
    axes = check_input_dims(input_dims or {},
                            {vi.name: None if vi.shape is None else len(vi.shape)
                             for vi in declared}, label, shapes_given=input_shapes)

    batches = batch_defaults([(vi.name, vi.shape) for vi in declared])
    used: list[Fix] = []
    resolved: list[ValueInfo] = []
    unresolved: list[str] = []
    missing: list[tuple[str, int | None]] = []
    for vi in declared:
        if vi.name in input_shapes:
            shape = tuple(int(d) for d in input_shapes[vi.name])
            if vi.shape is not None:
                _check_override(vi, shape)
            if any(d < 1 for d in shape):
                raise InvalidModel(f"the shape given for input {vi.name!r}, {list(shape)}, "
                                   "has a dimension < 1")
            resolved.append(ValueInfo(vi.name, vi.dtype, shape, vi.declared_shape))
            continue
        if vi.shape is None:
            unresolved.append(f"{vi.name}: unknown rank")
            missing.append((vi.name, None))
            resolved.append(vi)
            continue
        dims: list[Dim] = []
        for i, d in enumerate(vi.shape):
            given = axes.get(vi.name, {}).get(i)
            if given is not None:
                if isinstance(d, int) and d != given:
                    raise InvalidModel(f"dimension {vi.name}:{i} = {given} contradicts the "
                                       f"model's fixed dimension {d} ({_fmt(vi.shape)})")
                d = given
            elif isinstance(d, str) and d in free_dims:
                d = int(free_dims[d])
            elif not isinstance(d, int):
                batch = batches.get(d if isinstance(d, str) else (vi.name, i))
                if batch is not None:
                    d = 1
                    used.append(batch)
            if not isinstance(d, int):
                what = f"free dimension {d!r}" if isinstance(d, str) else "unnamed dimension"
                unresolved.append(f"{vi.name}[{i}] ({what})")
                missing.append((vi.name, i))
            dims.append(d)
        resolved.append(ValueInfo(vi.name, vi.dtype, tuple(dims), vi.declared_shape))
    if unresolved:
        raise UnresolvedDimensions(
            f"{len(unresolved)} input dimension(s) of {label} are not fixed: "
            + ", ".join(unresolved),
            fixes=fixes_for([(vi.name, vi.shape) for vi in declared], set(missing),
                            suggested))
    used = list(dict.fromkeys(used))
    return resolved, (default_note(used),) if used else ()


def _check_override(vi: ValueInfo, shape: tuple[int, ...]) -> None:
    assert vi.shape is not None
    if len(shape) != len(vi.shape):
        raise InvalidModel(f"the shape given for input {vi.name!r} has rank {len(shape)}, "
                           f"the model declares rank {len(vi.shape)} ({_fmt(vi.shape)})")
    for i, (want, got) in enumerate(zip(vi.shape, shape, strict=True)):
        if isinstance(want, int) and want != got:
            raise InvalidModel(f"the shape given for input {vi.name!r} sets axis {i} to {got}, "
                               f"which contradicts the model's fixed dimension {want} "
                               f"({_fmt(vi.shape)})")


def _fmt(shape: Sequence[Dim]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _resolved_shape(vi: ValueInfo) -> tuple[int, ...]:
    """The shape of an input `resolve_inputs` returned (every dimension an int)."""
    assert vi.shape is not None
    dims = tuple(d for d in vi.shape if isinstance(d, int))
    assert len(dims) == len(vi.shape)
    return dims


def pin_values(inputs: list[ValueInfo], pins: Mapping[str, Any]
               ) -> tuple[list[ValueInfo], dict[str, np.ndarray]]:
    """The inputs left after pinning `pins` (input name -> value) and the pinned values as
    read-only arrays of the inputs' types and shapes; InvalidModel for a name that is no
    input or a value that does not fit."""
    by_name = {vi.name: vi for vi in inputs}
    unknown = sorted(set(pins) - set(by_name))
    if unknown:
        raise InvalidModel(f"value(s) pinned for {unknown}, which are not graph inputs "
                           f"(inputs: {sorted(by_name)})")
    pinned: dict[str, np.ndarray] = {}
    for name, value in pins.items():
        vi = by_name[name]
        arr = _pin_array(name, value, vi.dtype)
        shape = _resolved_shape(vi)
        if arr.shape != shape:
            if arr.size == int(np.prod(shape, dtype=np.int64)):
                arr = arr.reshape(shape)
            else:
                raise InvalidModel(f"the value pinned for {name!r} has shape "
                                   f"{list(arr.shape)}, the input has shape {list(shape)}")
        arr.setflags(write=False)
        pinned[name] = arr
    return [vi for vi in inputs if vi.name not in pins], pinned


def _pin_array(name: str, value: Any, dtype: str) -> np.ndarray:
    """The value pinned for input `name` as an array of the input's `dtype`; InvalidModel
    when it is not numbers (for numeric inputs), or does not fit the type (integer inputs
    take whole numbers within their range)."""
    if dtype == "string":
        return np.asarray(value)
    try:
        raw = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidModel(f"the value pinned for {quoted(name)} is not an array of numbers "
                           f"({exception_text(exc)})") from None
    if raw.dtype.kind not in "biuf":
        raise InvalidModel(f"the value pinned for {quoted(name)} holds {raw.dtype}, not "
                           f"numbers (the input is {dtype})")
    try:
        target = np.dtype(dtype)
    except TypeError:
        raise InvalidModel(f"input {quoted(name)} is {dtype}, which cannot be pinned"
                           ) from None
    with np.errstate(all="ignore"):
        if target.kind in "iub" and raw.dtype.kind == "f" and raw.size:
            if not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
                raise InvalidModel(f"the value pinned for {quoted(name)} has non-integer "
                                   f"numbers; the input is {dtype}")
        if target.kind in "iu" and raw.dtype.kind in "iuf" and raw.size:
            info = np.iinfo(target)
            if raw.min() < info.min or raw.max() > info.max:
                raise InvalidModel(f"the value pinned for {quoted(name)} lies outside the "
                                   f"range of {dtype} ({info.min} to {info.max})")
        return raw.astype(target)
