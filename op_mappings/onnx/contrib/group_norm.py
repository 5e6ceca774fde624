"""com.microsoft GroupNorm and SkipGroupNorm (the diffusion UNet/VAE fusions of onnxruntime's
transformers optimizer) -> WebNN reshape, layerNormalization, mul/add and sigmoid.

- GroupNorm: y = gamma·(x − mean)/√(var + ε) + beta with mean and population variance per
  sample and group of C/groups channels (over the group's channels and all spatial
  positions), then SiLU y·sigmoid(y) when activation = 1.
- SkipGroupNorm: the same on s = x + skip [+ bias]; the optional second output is s.

WebNN has no groupNormalization: the input is reshaped so that one group's values span
whole axes ([N, H·W, groups, C/groups] normalised over axes 1 and 3 when channels_last = 1,
[N, groups, C/groups·H·W] over axis 2 otherwise) and normalised by layerNormalization
without scale; gamma and beta are then applied per channel. float16 is computed in float32
(statistics, affine and SiLU) and rounded once, as onnxruntime's kernels do.
onnxruntime has only CUDA/ROCm kernels for both ops (no CPU kernel).
"""

from __future__ import annotations

import math
from typing import Any

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_epsilon,
    attr_int,
    check_arity,
    check_same_type,
    check_shape,
    float_operand,
    to_type,
)

MS = "com.microsoft"
WORK = "float32"


def _layout(node: Node, x: Any) -> tuple[bool, int, int, float, int]:
    """(channels_last, channels, groups, epsilon, activation), checked."""
    last = attr_int(node, "channels_last", 1)
    if last not in (0, 1):
        raise InvalidModel(f"{node.op_type} channels_last={last}: 0 or 1 is needed")
    activation = attr_int(node, "activation", None)
    if activation not in (0, 1):
        raise UnsupportedAttribute(f"{node.op_type} activation={activation}: only 0 (none) "
                                   "and 1 (SiLU) are defined")
    groups = attr_int(node, "groups", None)
    if x.rank != 4:
        raise InvalidModel(f"{node.op_type} input must be 4-D (N, H, W, C or N, C, H, W), "
                           f"got shape {list(x.shape)}")
    channels = int(x.shape[3] if last else x.shape[1])
    if groups <= 0 or channels % groups:
        raise InvalidModel(f"{node.op_type} groups={groups} does not divide the {channels} "
                           "channels")
    return bool(last), channels, groups, attr_epsilon(node, 1e-5), activation


def _group_norm(ctx: ImportContext, node: Node, s: Any, last: bool, channels: int,
                groups: int, eps: float, activation: int) -> Any:
    """GroupNorm of float32 `s` with gamma (input 1) and beta (input 2), then SiLU."""
    b = ctx.builder
    n, shape = s.shape[0], list(s.shape)
    spatial = math.prod(shape[1:3] if last else shape[2:4])
    per_group = channels // groups
    if last:
        grouped = b.reshape(s, [n, spatial, groups, per_group])
        axes = [1, 3]
    else:
        grouped = b.reshape(s, [n, groups, per_group * spatial])
        axes = [2]
    y = b.reshape(b.layer_normalization(grouped, axes=axes, epsilon=eps), shape)
    param_shape = [channels] if last else [channels, 1, 1]
    gamma = to_type(ctx, b.reshape(ctx.operand(node.inputs[1]), param_shape), WORK)
    beta = to_type(ctx, b.reshape(ctx.operand(node.inputs[2]), param_shape), WORK)
    y = b.add(b.mul(y, gamma), beta)
    return b.mul(y, b.sigmoid(y)) if activation == 1 else y


def _params(ctx: ImportContext, node: Node, channels: int) -> None:
    gamma = float_operand(ctx, node, 1, "gamma")
    beta = float_operand(ctx, node, 2, "beta")
    check_shape(node, gamma, [channels], "gamma")
    check_shape(node, beta, [channels], "beta")
    check_same_type(node, [(gamma, "gamma"), (beta, "beta")])


@onnx_op("GroupNorm", since=1, domain=MS)
def group_norm(ctx: ImportContext, node: Node) -> Outputs:
    """Group normalisation with optional SiLU (layerNormalization over a grouped reshape).
    Restrictions: X 4-D float32/float16, NHWC (channels_last = 1, the default) or NCHW;
    gamma and beta 1-D of C (float32 or float16); activation 0 or 1; computed in float32."""
    check_arity(node, (3, 3))
    x = float_operand(ctx, node, 0, "X")
    last, channels, groups, eps, activation = _layout(node, x)
    _params(ctx, node, channels)
    y = _group_norm(ctx, node, to_type(ctx, x, WORK), last, channels, groups, eps, activation)
    return [to_type(ctx, y, x.data_type)]


def _skip(ctx: ImportContext, node: Node, x: Any, last: bool, channels: int) -> Any:
    """The skip operand in x's layout: (N, H, W, C), (N, 1, 1, C) or (N, C) (and the
    NCHW equivalents when channels_last = 0)."""
    skip = float_operand(ctx, node, 3, "skip")
    n = x.shape[0]
    if skip.rank == 2 and list(skip.shape) == [n, channels]:
        return ctx.builder.reshape(skip, [n, 1, 1, channels] if last else [n, channels, 1, 1])
    allowed = [list(x.shape), [n, 1, 1, channels] if last else [n, channels, 1, 1]]
    if list(skip.shape) not in allowed:
        raise InvalidModel(f"{node.op_type} skip has shape {list(skip.shape)}; "
                           f"{allowed[0]}, {allowed[1]} or {[n, channels]} is needed")
    return skip


@onnx_op("SkipGroupNorm", since=1, domain=MS)
def skip_group_norm(ctx: ImportContext, node: Node) -> Outputs:
    """GroupNorm of s = X + skip [+ bias] with optional SiLU; output 1 (optional) is s.
    Restrictions: X 4-D float32/float16, NHWC (channels_last = 1) or NCHW; skip of X's
    shape, (N, 1, 1, C) or (N, C) (NCHW: (N, C, 1, 1)); bias 1-D of C; skip and bias of X's
    type; gamma and beta 1-D of C; activation 0 or 1; computed in float32."""
    check_arity(node, (4, 5), (1, 2))
    x = float_operand(ctx, node, 0, "X")
    last, channels, groups, eps, activation = _layout(node, x)
    _params(ctx, node, channels)
    b = ctx.builder
    skip = _skip(ctx, node, x, last, channels)
    s = b.add(to_type(ctx, x, WORK), to_type(ctx, skip, WORK))
    bias = ctx.operand(node.inputs[4]) if node.input(4) else None
    check_same_type(node, [(x, "X"), (skip, "skip"), (bias, "bias")])
    if bias is not None:
        check_shape(node, bias, [channels], "bias")
        bias = b.reshape(bias, [channels] if last else [channels, 1, 1])
        s = b.add(s, to_type(ctx, bias, WORK))
    y = _group_norm(ctx, node, s, last, channels, groups, eps, activation)
    outs = [to_type(ctx, y, x.data_type)]
    if len(node.outputs) > 1 and node.outputs[1]:
        outs.append(to_type(ctx, s, x.data_type))
    elif len(node.outputs) > 1:
        outs.append(None)
    return outs

