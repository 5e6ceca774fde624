"""ONNX normalisations -> WebNN layerNormalization / instanceNormalization or decompositions.

- LayerNormalization (17): axes = [axis .. rank-1] -> layerNormalization with scale/bias
  broadcast to the normalised shape. When the optional Mean / InvStdDev outputs are used, a
  decomposition (reduceMean, sub, mul, add, sqrt, reciprocal) computed in float32
  (`stash_type` 1) produces all three outputs.
- RMSNormalization (23): x / sqrt(mean(x², axes) + epsilon) · scale, in float32 when
  stash_type is 1.
- InstanceNormalization: rank 4 -> instanceNormalization; other ranks reshaped to
  [N, C, prod(spatial), 1] and back.
- GroupNormalization (18: per-group scale/bias, 21: per-channel): reshape to
  [N, G, (C/G)·spatial, 1] -> instanceNormalization -> reshape -> mul(scale) -> add(bias).
- MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9) over `axes`
  (ONNX's function body).
- LpNormalization: x / max(reduceL1 or reduceL2(x, axis), tiny) (p 1 or 2).
- LRN: x / (bias + alpha/size · Σ_window x²)^beta; the channel window sum is a matmul with a
  constant band matrix on [N, C, rest].
Restrictions: float32/float16; GroupNormalization needs C divisible by num_groups.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import attr_in_range
from op_mappings._common.values import const_or_none, norm_axis, scalar
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check, norm_axes


def _broadcast_to(ctx: ImportContext, name: str, shape: list[int]) -> Any:
    """Input `name` broadcast (numpy rules) to exactly `shape`."""
    value = const_or_none(ctx, name)
    given = tuple(ctx.shape(name))
    try:
        fits = len(given) <= len(shape) and np.broadcast_shapes(given, tuple(shape)) == tuple(
            shape)
    except ValueError:
        fits = False
    if not fits:
        raise InvalidModel(f"input {name!r} of shape {list(given)} does not broadcast to "
                           f"{shape}")
    if value is not None:
        return ctx.constant(np.ascontiguousarray(np.broadcast_to(value, shape)))
    x = ctx.operand(name)
    b = ctx.builder
    if len(x.shape) < len(shape):
        x = b.reshape(x, [1] * (len(shape) - len(x.shape)) + list(x.shape))
    return x if list(x.shape) == shape else b.expand(x, shape)


@onnx_op("LayerNormalization", since=17)
def layer_normalization(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    axis = norm_axis(node.attrs["axis"], x.rank)
    axes = list(range(axis, x.rank))
    shape = list(x.shape[axis:])
    eps = float(node.attrs["epsilon"])
    scale = _broadcast_to(ctx, node.inputs[1], shape)
    bias = _broadcast_to(ctx, node.input(2), shape) if node.input(2) else None
    wants_stats = any(node.outputs[1:3]) if len(node.outputs) > 1 else False
    if not wants_stats:
        return [b.layer_normalization(x, scale=scale, bias=bias, axes=axes, epsilon=eps)]
    dt = x.data_type
    stash = "float32" if int(node.attrs.get("stash_type", 1)) == 1 else dt
    xs = b.cast(x, stash) if stash != dt else x
    mean = b.reduce_mean(xs, axes=axes, keep_dimensions=True)
    centred = b.sub(xs, mean)
    var = b.reduce_mean(b.mul(centred, centred), axes=axes, keep_dimensions=True)
    inv = b.reciprocal(b.sqrt(b.add(var, scalar(ctx, eps, stash))))
    y = b.mul(centred, inv)
    if stash != dt:
        y = b.cast(y, dt)
    y = b.mul(y, scale)
    if bias is not None:
        y = b.add(y, bias)
    return [y, mean, inv][:len(node.outputs)]


@onnx_op("RMSNormalization", since=23)
def rms_normalization(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    axis = norm_axis(node.attrs["axis"], x.rank)
    axes = list(range(axis, x.rank))
    dt = x.data_type
    stash = "float32" if int(node.attrs.get("stash_type", 1)) == 1 else dt
    xs = b.cast(x, stash) if stash != dt else x
    ms = b.reduce_mean(b.mul(xs, xs), axes=axes, keep_dimensions=True)
    y = b.div(xs, b.sqrt(b.add(ms, scalar(ctx, float(node.attrs["epsilon"]), stash))))
    if stash != dt:
        y = b.cast(y, dt)
    return [b.mul(y, _broadcast_to(ctx, node.inputs[1], list(x.shape[axis:])))]


def _instance_norm(ctx: ImportContext, x: Any, scale: Any, bias: Any, eps: float) -> Any:
    b = ctx.builder
    if x.rank == 4:
        return b.instance_normalization(x, scale=scale, bias=bias, epsilon=eps)
    if x.rank < 3:
        raise UnsupportedAttribute(f"instance normalisation of rank {x.rank} is not supported")
    n, c = x.shape[:2]
    flat = b.reshape(x, [n, c, math.prod(x.shape[2:]), 1])
    y = b.instance_normalization(flat, scale=scale, bias=bias, epsilon=eps)
    return b.reshape(y, list(x.shape))


@onnx_op("InstanceNormalization", since=6)
def instance_normalization(ctx: ImportContext, node: Node) -> Outputs:
    x, scale, bias = ctx.inputs(node)
    float_dtype_check(node, x)
    return [_instance_norm(ctx, x, scale, bias, float(node.attrs["epsilon"]))]


def _per_channel(ctx: ImportContext, name: str, groups: int, channels: int) -> Any:
    """A per-group (opset 18) parameter repeated to one value per channel."""
    value = const_or_none(ctx, name)
    if value is not None:
        return ctx.constant(np.repeat(value.reshape(-1), channels // groups))
    b = ctx.builder
    p = b.reshape(ctx.operand(name), [groups, 1])
    return b.reshape(b.expand(p, [groups, channels // groups]), [channels])


@onnx_op("GroupNormalization", since=18)
def group_normalization(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    if x.rank < 3:
        raise UnsupportedAttribute("GroupNormalization needs rank >= 3")
    groups = int(node.attrs["num_groups"])
    n, c = x.shape[:2]
    if c % groups:
        raise InvalidModel(f"GroupNormalization channels {c} not divisible by {groups}")
    dt = x.data_type
    stash = "float32" if int(node.attrs.get("stash_type", 1)) == 1 else dt
    spatial = math.prod(x.shape[2:])
    xs = b.cast(x, stash) if stash != dt else x
    g = b.reshape(xs, [n, groups, (c // groups) * spatial, 1])
    g = b.instance_normalization(g, epsilon=float(node.attrs["epsilon"]))
    y = b.reshape(g, list(x.shape))
    if stash != dt:
        y = b.cast(y, dt)
    if node.version < 21 and ctx.shape(node.inputs[1]) != (c,):
        scale = _per_channel(ctx, node.inputs[1], groups, c)
        bias = _per_channel(ctx, node.inputs[2], groups, c)
    else:
        scale, bias = ctx.operand(node.inputs[1]), ctx.operand(node.inputs[2])
    shape = [c] + [1] * (x.rank - 2)
    return [b.add(b.mul(y, b.reshape(scale, shape)), b.reshape(bias, shape))]


@onnx_op("MeanVarianceNormalization", since=9)
def mean_variance_normalization(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    axes = norm_axes(list(node.attrs["axes"]), x.rank, "MeanVarianceNormalization axes")
    mean = b.reduce_mean(x, axes=axes, keep_dimensions=True)
    mean_sq = b.reduce_mean(b.mul(x, x), axes=axes, keep_dimensions=True)
    var = b.sub(mean_sq, b.mul(mean, mean))
    std = b.add(b.sqrt(var), scalar(ctx, 1e-9, x.data_type))
    return [b.div(b.sub(x, mean), std)]


@onnx_op("LpNormalization", since=1)
def lp_normalization(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    axis = norm_axis(node.attrs["axis"], x.rank)
    p = int(node.attrs["p"])
    if p == 1:
        norm = b.reduce_l1(x, axes=[axis], keep_dimensions=True)
    elif p == 2:
        norm = b.reduce_l2(x, axes=[axis], keep_dimensions=True)
    else:
        raise UnsupportedAttribute(f"LpNormalization p={p}: only 1 and 2 are defined")
    tiny = float(np.finfo(x.data_type).tiny)
    return [b.div(x, b.max(norm, scalar(ctx, tiny, x.data_type)))]


@onnx_op("LRN", since=1)
def lrn(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    if x.rank < 3:
        raise InvalidModel(f"input 0 has rank {x.rank}, LRN needs [N, C, D1, ...]")
    size = int(attr_in_range(node, "size", 1))
    alpha, beta = float(attr_in_range(node, "alpha")), float(attr_in_range(node, "beta"))
    bias = float(attr_in_range(node, "bias"))
    n, c = x.shape[:2]
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    idx = np.arange(c)
    band = ((idx[None, :] >= idx[:, None] - lo) & (idx[None, :] <= idx[:, None] + hi))
    rest = math.prod(x.shape[2:])
    sq = b.reshape(b.mul(x, x), [n, c, rest])
    window = b.matmul(ctx.constant(band.astype(x.data_type)), sq)
    window = b.reshape(window, list(x.shape))
    dt = x.data_type
    base = b.add(b.mul(window, scalar(ctx, alpha / size, dt)), scalar(ctx, bias, dt))
    return [b.div(x, b.pow(base, scalar(ctx, beta, dt)))]
