"""onnxruntime's fused layer normalisations -> WebNN layerNormalization or decompositions.

- SkipLayerNormalization (com.microsoft): LayerNorm(input + skip [+ bias]) · gamma [+ beta]
  over the last axis; outputs output, mean, inv_std_var (float32, shape [..., 1]) and
  input_skip_bias_sum.
- SkipSimplifiedLayerNormalization (com.microsoft): the RMS form, (input + skip [+ bias]) /
  √(mean(s²) + ε) · gamma; its mean output is 0 (onnxruntime writes zeros).
- SimplifiedLayerNormalization (default domain, as onnxruntime registers it; also accepted
  in com.microsoft): X / √(mean(X², axes) + ε) · scale over axes [axis, rank); outputs Y
  and inv_std_var.
- LayerNormalization opsets 1-16 (onnxruntime's contrib schema in the default domain, also
  accepted in com.microsoft): the opset-17 semantics, with Y in the scale's type.

float16 inputs are normalised in float32 as onnxruntime does (the statistics outputs are
float32). Without statistics outputs and with one data type the normalisation is WebNN's
layerNormalization; otherwise it is decomposed (reduceMean, sub, mul, add, sqrt,
reciprocal).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_epsilon,
    attr_int,
    check_arity,
    check_same_type,
    check_shape,
    float_operand,
    scalar,
    to_type,
)

MS = "com.microsoft"


def _wanted(node: Node, index: int) -> bool:
    return len(node.outputs) > index and bool(node.outputs[index])


def _stats(ctx: ImportContext, s: Any, axes: list[int], eps: float, simplified: bool
           ) -> tuple[Any, Any | None, Any]:
    """(normalised s, mean or None for the RMS form, 1/√(var + ε)) over `axes` with the
    statistics kept as size-1 dimensions, in s's data type."""
    b, dt = ctx.builder, s.data_type
    if simplified:
        mean = None
        centred = s
    else:
        mean = b.reduce_mean(s, axes=axes, keep_dimensions=True)
        centred = b.sub(s, mean)
    var = b.reduce_mean(b.mul(centred, centred), axes=axes, keep_dimensions=True)
    inv = b.reciprocal(b.sqrt(b.add(var, scalar(ctx, eps, dt))))
    return b.mul(centred, inv), mean, inv


def _broadcast(a: Any, b: Any) -> tuple[int, ...] | None:
    """numpy's broadcast of shapes `a` and `b`, or None when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        return None


def _param(ctx: ImportContext, node: Node, index: int, shape: list[int], what: str) -> Any:
    """Input `index` (scale/bias) broadcast to the normalised `shape` (numpy rules), or None
    when omitted."""
    name = node.input(index)
    if not name:
        return None
    p = ctx.operand(name)
    if list(p.shape) != shape and _broadcast(p.shape, shape) != tuple(shape):
        raise InvalidModel(f"{node.op_type} {what} of shape {list(p.shape)} does not broadcast "
                           f"to the normalised shape {shape}")
    b = ctx.builder
    if p.rank < len(shape):
        p = b.reshape(p, [1] * (len(shape) - p.rank) + list(p.shape))
    return p if list(p.shape) == shape else b.expand(p, shape)


def _axis_norm(ctx: ImportContext, node: Node, simplified: bool) -> list[Any]:
    """LayerNormalization (opsets 1-16) and SimplifiedLayerNormalization."""
    n_in = (2, 2) if simplified else (2, 3)
    check_arity(node, n_in, (1, 2) if simplified else (1, 3))
    x = float_operand(ctx, node, 0, "X")
    scale = float_operand(ctx, node, 1, "scale")
    axis = norm_axis(attr_int(node, "axis", -1), x.rank, f"{node.op_type} axis")
    eps = attr_epsilon(node, 1e-5)
    stash = attr_int(node, "stash_type", 1)
    if stash != 1:
        raise UnsupportedAttribute(f"{node.op_type} stash_type={stash}: only 1 (float32 "
                                   "statistics) is supported")
    axes = list(range(axis, x.rank))
    shape = list(x.shape[axis:])
    out_type = scale.data_type
    b = ctx.builder
    stats = any(_wanted(node, i) for i in range(1, len(node.outputs)))
    if not simplified and not stats and x.data_type == out_type:
        bias = _param(ctx, node, 2, shape, "B")
        if bias is not None:
            check_same_type(node, [(scale, "scale"), (bias, "B")])
        gamma = _param(ctx, node, 1, shape, "scale")
        return [b.layer_normalization(x, scale=gamma, bias=bias, axes=axes, epsilon=eps)]
    xs = to_type(ctx, x, "float32")
    y, mean, inv = _stats(ctx, xs, axes, eps, simplified)
    gamma = to_type(ctx, _param(ctx, node, 1, shape, "scale"), "float32")
    y = b.mul(y, gamma)
    if not simplified and node.input(2):
        bias = _param(ctx, node, 2, shape, "B")
        check_same_type(node, [(scale, "scale"), (bias, "B")])
        y = b.add(y, to_type(ctx, bias, "float32"))
    y = to_type(ctx, y, out_type)
    if simplified:
        return [y, inv][:len(node.outputs)]
    return [y, mean, inv][:len(node.outputs)]


@onnx_op("LayerNormalization", since=1)
@onnx_op("LayerNormalization", since=1, domain=MS)
def layer_normalization_contrib(ctx: ImportContext, node: Node) -> Outputs:
    """Opsets 1-16 are onnxruntime's contrib LayerNormalization (registered in the default
    domain; also accepted in com.microsoft), opset 17 the ONNX op.
    Restrictions: float32/float16; normalises axes [axis, rank) (layerNormalization, or a
    reduceMean decomposition in float32 when the Mean/InvStdDev outputs are used or the
    types differ); scale and bias broadcast to the normalised shape; Y has the scale's type;
    stash_type 1 only before opset 17."""
    return _axis_norm(ctx, node, simplified=False)


@onnx_op("SimplifiedLayerNormalization", since=1)
@onnx_op("SimplifiedLayerNormalization", since=1, domain=MS)
def simplified_layer_normalization(ctx: ImportContext, node: Node) -> Outputs:
    """RMS normalisation X / √(mean(X², axes) + ε) · scale (onnxruntime registers it in the
    default domain; also accepted in com.microsoft).
    Restrictions: float32/float16, computed in float32 (stash_type 1 only); Y has the scale's
    type; the inv_std_var output is float32 with size-1 normalised axes."""
    return _axis_norm(ctx, node, simplified=True)


def _skip_norm(ctx: ImportContext, node: Node, simplified: bool) -> list[Any]:
    check_arity(node, (3, 4) if simplified else (3, 5), (1, 4))
    x = float_operand(ctx, node, 0, "input")
    skip = float_operand(ctx, node, 1, "skip")
    gamma = float_operand(ctx, node, 2, "gamma")
    if x.rank not in (2, 3):
        raise InvalidModel(f"{node.op_type} input must be 2-D or 3-D, got shape "
                           f"{list(x.shape)}")
    hidden = x.shape[-1]
    fits = skip.shape == x.shape or _broadcast(skip.shape, x.shape) == tuple(x.shape)
    if not fits or skip.rank < 2 or list(skip.shape[-2:]) != list(x.shape[-2:]):
        raise InvalidModel(f"{node.op_type} skip of shape {list(skip.shape)} does not broadcast "
                           f"to the input shape {list(x.shape)}")
    check_shape(node, gamma, [hidden], "gamma")
    beta_i, bias_i = (None, 3) if simplified else (3, 4)
    beta = ctx.operand(node.input(beta_i)) if beta_i and node.input(beta_i) else None
    bias = ctx.operand(node.input(bias_i)) if node.input(bias_i) else None
    if beta is not None:
        check_shape(node, beta, [hidden], "beta")
    if bias is not None:
        check_shape(node, bias, [hidden], "bias")
    check_same_type(node, [(x, "input"), (skip, "skip"), (gamma, "gamma"), (beta, "beta"),
                           (bias, "bias")])
    eps = attr_epsilon(node, 1e-12)
    b = ctx.builder
    dt = x.data_type
    work = "float32"

    def w(v: Any) -> Any:
        return None if v is None else to_type(ctx, v, work)

    s = b.add(w(x), w(skip))
    if bias is not None:
        s = b.add(s, w(bias))
    axes = [x.rank - 1]
    stats = _wanted(node, 1) or _wanted(node, 2)
    if not simplified and not stats:
        y = b.layer_normalization(s, scale=w(gamma), bias=w(beta), axes=axes, epsilon=eps)
        mean = inv = None
    else:
        y, mean, inv = _stats(ctx, s, axes, eps, simplified)
        y = b.mul(y, w(gamma))
        if beta is not None:
            y = b.add(y, w(beta))
        if mean is None and _wanted(node, 1):
            mean = ctx.constant(np.zeros(list(x.shape[:-1]) + [1], np.float32))
    outs = [to_type(ctx, y, dt), mean, inv, to_type(ctx, s, dt) if _wanted(node, 3) else None]
    return outs[:len(node.outputs)]


@onnx_op("SkipLayerNormalization", since=1, domain=MS)
def skip_layer_normalization(ctx: ImportContext, node: Node) -> Outputs:
    """LayerNorm(input + skip + bias)·gamma + beta over the last axis.
    Restrictions: float32/float16 (computed in float32, like onnxruntime); input 2-D or 3-D,
    skip of its shape, (1, S, H) or (S, H) (onnxruntime's rule); gamma/beta/bias 1-D of the
    hidden size; mean and inv_std_var are float32 [..., 1]."""
    return _skip_norm(ctx, node, simplified=False)


@onnx_op("SkipSimplifiedLayerNormalization", since=1, domain=MS)
def skip_simplified_layer_normalization(ctx: ImportContext, node: Node) -> Outputs:
    """(input + skip + bias) / √(mean(s²) + ε)·gamma over the last axis (input 3 is the
    bias).
    Restrictions: float32/float16 (computed in float32, like onnxruntime); input 2-D or 3-D,
    skip of its shape, (1, S, H) or (S, H); gamma/bias 1-D of the hidden size; the mean output is zeros and
    inv_std_var float32 [..., 1], as onnxruntime writes them."""
    return _skip_norm(ctx, node, simplified=True)
