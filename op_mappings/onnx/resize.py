"""ONNX Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9) -> WebNN resample2d when exactly
equivalent, otherwise per-axis interpolation with constant tables.

resample2d is used when the input is 4-D, at most two axes change, the mode is nearest with
`round_prefer_floor` or linear (no antialias when downscaling), the coordinate mode is
`half_pixel` (or `pytorch_half_pixel` with every resized output length > 1), and the scale
ONNX maps coordinates with is exactly out/in (sizes given, or scales with in·scale an
integer equal to the output length) — WebNN always maps with out/in. (With sizes, ONNX's
scale is out/in by definition; onnxruntime evaluates it in float32, which can round an exact
nearest tie the other way.)

Otherwise every resized axis is processed on its own (ONNX Resize is separable):
- nearest (`round_prefer_floor`, `round_prefer_ceil`, `floor`, `ceil`; opset 10 and Upsample
  use onnxruntime's "simple" rule: ceil when downscaling, truncation otherwise): a constant
  index table applied with `gather` (exact for every data type);
- linear, cubic (`cubic_coeff_a`, `exclude_outside`) and `antialias = 1` (linear/cubic
  filters widened by 1/scale when downscaling): a constant [out, in] interpolation matrix
  applied with `matmul` (float32/float16 only);
- `tf_crop_and_resize`: coordinates from `roi`; positions outside the input get
  `extrapolation_value` (`where` with a constant mask).
Every coordinate mode is supported: half_pixel, half_pixel_symmetric, pytorch_half_pixel,
align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize. Coordinates are
computed in float32 as onnxruntime does. `axes` (opset 18) and `keep_aspect_ratio_policy`
(stretch / not_larger / not_smaller, output length round-half-up of scale·in) are supported.

Restrictions: roi, scales and sizes must be constants; linear/cubic resizing of integer
tensors is rejected (only nearest is exact for them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.core.webnn.limits import OP_LIMITS
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none, ints
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axes

F32 = np.float32


def coordinates(mode: str, out_len: int, in_len: int, scale: float, roi_start: float = 0.0,
                roi_end: float = 1.0) -> np.ndarray:
    """Source coordinate of every output index (float32, onnxruntime's formulas)."""
    x = np.arange(out_len, dtype=F32)
    s, n, m = F32(scale), F32(in_len), F32(out_len)
    half = F32(0.5)
    if mode == "half_pixel":
        return (x + half) / s - half
    if mode == "half_pixel_symmetric":
        adjustment = m / (s * n)
        offset = (n / F32(2)) * (F32(1) - adjustment)
        return offset + (x + half) / s - half
    if mode == "pytorch_half_pixel":
        return (x + half) / s - half if out_len > 1 else np.zeros(out_len, F32)
    if mode == "asymmetric":
        return x / s
    if mode == "tf_half_pixel_for_nn":
        return (x + half) / s
    if mode == "align_corners":
        if out_len == 1:
            return np.zeros(1, F32)
        return x * (n - F32(1)) / (m - F32(1))
    if mode == "tf_crop_and_resize":
        a, b = F32(roi_start), F32(roi_end)
        if out_len == 1:
            return np.full(1, half * (a + b) * (n - F32(1)), F32)
        return a * (n - F32(1)) + (x * (b - a) * (n - F32(1))) / (m - F32(1))
    raise UnsupportedAttribute(f"Resize coordinate_transformation_mode {mode!r} is unknown")


def nearest_index(coords: np.ndarray, nearest_mode: str, downscale: bool) -> np.ndarray:
    """Rounded source indices (before clamping)."""
    rounded: np.ndarray  # numpy's ufunc stubs type these calls as Any
    if nearest_mode == "round_prefer_floor":
        fl = np.floor(coords)
        rounded = np.where(coords == fl + F32(0.5), fl, np.floor(coords + F32(0.5)))
    elif nearest_mode == "round_prefer_ceil":
        rounded = np.floor(coords + F32(0.5))  # std::round on the clamped-later coordinates
    elif nearest_mode == "floor":
        rounded = np.floor(coords)
    elif nearest_mode == "ceil":
        rounded = np.ceil(coords)
    elif nearest_mode == "simple":
        rounded = np.ceil(coords) if downscale else np.trunc(coords)
    else:
        raise UnsupportedAttribute(f"Resize nearest_mode {nearest_mode!r} is unknown")
    return rounded


def _cubic(a: float, s: np.ndarray) -> np.ndarray:
    """Keys cubic kernel at distances s (any sign)."""
    x = np.abs(s)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x <= 1, near, np.where(x < 2, far, 0.0))


def interpolation_matrix(coords: np.ndarray, in_len: int, mode: str, scale: float,
                         cubic_a: float, exclude_outside: bool, antialias: bool
                         ) -> np.ndarray:
    """[out, in] float64 weights of linear / cubic interpolation at `coords`, taps outside
    the input replicated from the edge (or dropped and renormalised: exclude_outside)."""
    c = coords.astype(np.float64)
    out_len = c.shape[0]
    if mode == "linear":
        c = np.clip(c, 0, in_len - 1) if not (antialias and scale < 1) else c
    base = np.floor(c)
    ratio = c - base
    if antialias and scale < 1:
        if mode == "linear":
            start = math.floor(-1 / scale) + 1
            offsets = np.arange(start, 2 - start)
            w = np.clip(1 - np.abs((offsets[None, :] - ratio[:, None]) * scale), 0, 1)
        else:
            start = math.floor(-2 / scale) + 1
            offsets = np.arange(start, 2 - start)
            w = _cubic(cubic_a, (offsets[None, :] - ratio[:, None]) * scale)
        w = w / w.sum(axis=1, keepdims=True)
    elif mode == "linear":
        offsets = np.arange(0, 2)
        w = np.stack([1 - ratio, ratio], axis=1)
    else:
        offsets = np.arange(-1, 3)
        w = _cubic(cubic_a, offsets[None, :] - ratio[:, None])
    idx = base[:, None].astype(np.int64) + offsets[None, :]
    if exclude_outside:
        w = np.where((idx < 0) | (idx >= in_len), 0.0, w)
        w = w / w.sum(axis=1, keepdims=True)
    idx = np.clip(idx, 0, in_len - 1)
    m = np.zeros((out_len, in_len))
    np.add.at(m, (np.repeat(np.arange(out_len), idx.shape[1]), idx.reshape(-1)), w.reshape(-1))
    return m


class _Plan:
    """Output lengths and coordinate scales of every axis."""

    def __init__(self, ctx: ImportContext, node: Node, in_shape: Sequence[int],
                 scales: np.ndarray | None, sizes: np.ndarray | None,
                 roi: np.ndarray | None, axes: list[int]) -> None:
        rank = len(in_shape)
        self.axes = axes
        self.out = list(in_shape)
        self.scale = [1.0] * rank
        self.exact = [True] * rank  # the coordinate scale is exactly out/in
        self.roi = [(0.0, 1.0)] * rank
        if roi is not None and roi.size:
            r = roi.reshape(-1).astype(np.float64)
            if r.size != 2 * len(axes):
                raise InvalidModel(f"Resize roi has {r.size} values, expected {2 * len(axes)}")
            if not np.all(np.isfinite(r)):
                raise InvalidModel(f"Resize roi {r.tolist()} must hold finite numbers")
            for i, a in enumerate(axes):
                self.roi[a] = (float(r[i]), float(r[len(axes) + i]))
        policy = str(node.attrs.get("keep_aspect_ratio_policy", "stretch"))
        if sizes is not None and sizes.size:
            sz = ints(sizes, "Resize sizes")
            if len(sz) != len(axes):
                raise InvalidModel(f"Resize sizes {sz} do not match axes {axes}")
            ratios = [F32(F32(s) / F32(in_shape[a])) for s, a in zip(sz, axes, strict=True)]
            if policy == "stretch":
                for a, size, ratio in zip(axes, sz, ratios, strict=True):
                    self.out[a], self.scale[a] = size, float(ratio)  # ONNX: exactly s / in
            elif policy in ("not_larger", "not_smaller"):
                common = min(ratios) if policy == "not_larger" else max(ratios)
                for a in axes:
                    self.out[a] = int(math.floor(float(common) * in_shape[a] + 0.5))
                    self.scale[a] = float(common)
                    self.exact[a] = float(common) * in_shape[a] == self.out[a]
            else:
                raise UnsupportedAttribute(f"Resize keep_aspect_ratio_policy {policy!r} is "
                                           "unknown")
        elif scales is not None and scales.size:
            sc = [float(F32(v)) for v in scales.reshape(-1)]
            if len(sc) != len(axes):
                raise InvalidModel(f"Resize scales {sc} do not match axes {axes}")
            for a, s in zip(axes, sc, strict=True):
                if not s > 0 or not math.isfinite(s):
                    raise InvalidModel(f"Resize scales {sc} must be positive finite numbers")
                with np.errstate(over="ignore"):  # an overflow is checked just below
                    length = float(F32(s) * F32(in_shape[a]))
                if not math.isfinite(length):
                    raise InvalidModel(f"Resize scale {s} makes axis {a} of size {in_shape[a]} "
                                       "too long")
                self.out[a] = int(math.floor(length))
                self.scale[a] = s
                self.exact[a] = s * in_shape[a] == self.out[a]
        else:
            raise InvalidModel("Resize needs scales or sizes")
        for a in range(rank):
            if self.out[a] < 1:
                raise UnsupportedAttribute(f"Resize output length {self.out[a]} along axis "
                                           f"{a}: zero-size tensors are not representable")


def _apply_axis(ctx: ImportContext, x: Any, axis: int, table: np.ndarray, is_index: bool,
                extrap: np.ndarray | None, value: float) -> Any:
    b = ctx.builder
    if is_index:
        y = b.gather(x, ctx.constant(table.astype(np.int32)), axis=axis)
    else:
        m = table.astype(x.data_type)
        rank = x.rank
        if axis == rank - 1:
            y = b.matmul(x, ctx.constant(np.ascontiguousarray(m.T)))
        elif axis == rank - 2:
            y = b.matmul(ctx.constant(m), x)
        else:
            perm = [i for i in range(rank) if i != axis] + [axis]
            inv = list(np.argsort(perm))
            t = b.matmul(b.transpose(x, permutation=perm),
                         ctx.constant(np.ascontiguousarray(m.T)))
            y = b.transpose(t, permutation=[int(i) for i in inv])
    if extrap is not None and extrap.any():
        shape = [1] * x.rank
        shape[axis] = extrap.shape[0]
        mask = ctx.constant(extrap.reshape(shape).astype(np.uint8))
        fill = ctx.builder.constant(np.asarray(value).astype(x.data_type))
        y = b.where(mask, fill, y)
    return y


def resize(ctx: ImportContext, node: Node, x: Any, plan: _Plan, mode: str, coord: str,
           nearest_mode: str) -> Any:
    """Resize `x` by `plan` (see the module docstring)."""
    attrs = node.attrs
    antialias = bool(attrs.get("antialias", 0))
    exclude = bool(attrs.get("exclude_outside", 0))
    cubic_a = float(attrs.get("cubic_coeff_a", -0.75))
    value = float(attrs.get("extrapolation_value", 0.0))
    in_shape = list(x.shape)
    crop = coord == "tf_crop_and_resize"
    changed = [a for a in range(x.rank)
               if plan.out[a] != in_shape[a] or plan.scale[a] != 1.0
               or (crop and plan.roi[a] != (0.0, 1.0))]
    if not changed:
        return ctx.builder.identity(x)
    if ctx.folding:
        ctx.check_constant(plan.out, x.data_type)
    for a in changed:  # per-axis coordinate tables / interpolation matrices (float64)
        ctx.check_constant(plan.out[a] * (in_shape[a] if mode != "nearest" else 1), 8,
                           "the resize table would take")
    if mode not in ("nearest", "linear", "cubic"):
        raise UnsupportedAttribute(f"Resize mode {mode!r} is unknown")
    native = _native(ctx, x, plan, changed, mode, coord, nearest_mode, antialias)
    if native is not None:
        return native
    if mode != "nearest" and x.data_type not in FLOAT_TYPES:
        raise UnsupportedAttribute(f"Resize mode {mode!r} on {x.data_type} data is not "
                                   "supported (only nearest is exact for integers)")
    y = x
    for a in changed:
        n, m, s = in_shape[a], plan.out[a], plan.scale[a]
        coords = coordinates(coord, m, n, s, *plan.roi[a])
        extrap = None
        if coord == "tf_crop_and_resize":
            extrap = (coords < 0) | (coords > F32(n - 1))
        if mode == "nearest":
            idx = nearest_index(coords, nearest_mode, s < 1)
            table = np.clip(idx, 0, n - 1).astype(np.int64)
            y = _apply_axis(ctx, y, a, table, True, extrap, value)
        else:
            mat = interpolation_matrix(coords, n, mode, s, cubic_a, exclude, antialias)
            y = _apply_axis(ctx, y, a, mat, False, extrap, value)
    return y


def _native(ctx: ImportContext, x: Any, plan: _Plan, changed: list[int], mode: str,
            coord: str, nearest_mode: str, antialias: bool) -> Any:
    """resample2d when exactly equivalent, else None."""
    if x.rank != 4 or len(changed) > 2 or mode == "cubic":
        return None
    if mode == "nearest" and nearest_mode != "round_prefer_floor":
        return None
    if mode == "linear" and x.data_type not in FLOAT_TYPES:
        return None
    if x.data_type not in OP_LIMITS["resample2d"]["input"].data_types:
        return None
    if coord == "pytorch_half_pixel":
        if any(plan.out[a] <= 1 for a in changed):
            return None
    elif coord != "half_pixel":
        return None
    for a in changed:
        n, m = x.shape[a], plan.out[a]
        if not plan.exact[a]:
            return None
        if mode == "linear" and antialias and m < n:
            return None
    axes = sorted(changed)
    if len(axes) == 1:
        other = next(a for a in range(4) if a not in axes)
        axes = sorted([axes[0], other])
    return ctx.builder.resample2d(
        x, mode="nearest-neighbor" if mode == "nearest" else "linear",
        sizes=[plan.out[a] for a in axes], axes=axes)


def _axes(node: Node, rank: int) -> list[int]:
    axes = node.attrs.get("axes")
    if axes is None or len(axes) == 0:
        return list(range(rank))
    return norm_axes(list(axes), rank, "Resize axes")


def _const(ctx: ImportContext, node: Node, i: int) -> np.ndarray | None:
    name = node.input(i)
    if not name:
        return None
    value = const_or_none(ctx, name)
    if value is None:
        raise UnsupportedAttribute(f"{node.op_type} input {i} ({name!r}) must be a constant",
                                   hint="fold or pin the inputs computing it")
    return value


@onnx_op("Resize", since=10)
def resize10(ctx: ImportContext, node: Node) -> Outputs:
    """Resize-10: asymmetric coordinates, nearest with onnxruntime's "simple" rounding."""
    x = ctx.operand(node.inputs[0])
    plan = _Plan(ctx, node, x.shape, _const(ctx, node, 1), None, None, list(range(x.rank)))
    return [resize(ctx, node, x, plan, str(node.attrs["mode"]), "asymmetric", "simple")]


@onnx_op("Resize", since=11)
def resize11(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    axes = _axes(node, x.rank)
    plan = _Plan(ctx, node, x.shape, _const(ctx, node, 2), _const(ctx, node, 3),
                 _const(ctx, node, 1), axes)
    return [resize(ctx, node, x, plan, str(node.attrs["mode"]),
                   str(node.attrs["coordinate_transformation_mode"]),
                   str(node.attrs["nearest_mode"]))]


@onnx_op("Upsample", since=7)
def upsample7(ctx: ImportContext, node: Node) -> Outputs:
    """Upsample-7 (scales attribute) and 9 (scales input): asymmetric coordinates;
    "bilinear" is the old spelling of linear."""
    x = ctx.operand(node.inputs[0])
    scales = (np.asarray(node.attrs["scales"], dtype=np.float32) if node.version < 9
              else _const(ctx, node, 1))
    plan = _Plan(ctx, node, x.shape, scales, None, None, list(range(x.rank)))
    mode = str(node.attrs.get("mode", "nearest"))
    mode = "linear" if mode == "bilinear" else mode
    return [resize(ctx, node, x, plan, mode, "asymmetric", "simple")]


@onnx_op("Upsample", since=9)
def upsample9(ctx: ImportContext, node: Node) -> Outputs:
    return upsample7(ctx, node)
