"""ONNX lowerings: matmul, gemm, batchNormalization, instanceNormalization,
layerNormalization (all computed in float32; float16 operands are lifted and the result
rounded once).

Restrictions and notes:
- gemm: `alpha`/`beta` are cast to the operand type first, as WebNN specifies; C (rank 0-2)
  broadcasts unidirectionally, as in ONNX Gemm.
- batchNormalization: any rank ≥ 1 and any `axis`, decomposed into Sub/Add/Sqrt/Div/Mul
  with the parameters reshaped to broadcast along `axis`.
- instanceNormalization: "nhwc" is transposed to NCHW around ONNX InstanceNormalization.
- layerNormalization: arbitrary (unsorted) axes: the normalised axes are transposed to the
  end in `axes` order (matching the scale/bias layout) around ONNX LayerNormalization; empty
  axes give `0·scale + bias` (x − x, so NaN/Inf inputs stay NaN). A float32 input
  `(a + s) + bias` normalised over the last axis is emitted as `(a + bias) + s`, which
  onnxruntime fuses into SkipLayerNormalization (`patterns.lower_skip_add`).
- Missing scale/bias are constants 1/0.
"""

from __future__ import annotations

import numpy as np

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, constant_value, lowering
from converter.runtimes.onnxruntime.lowering.patterns import lower_skip_add

F32 = "float32"


def _cast_param(value: float, data_type: str) -> float:
    return float(np.asarray(value, dtype=np.float64).astype(data_type))


@lowering("matmul")
def matmul(e: Emitter, op: Operation) -> list[str]:
    a, b = op.args
    out = op.outputs[0].data_type
    y = e.node("MatMul", [e.input(a, F32), e.input(b, F32)], F32)
    return [e.cast(y, out)]


@lowering("gemm")
def gemm(e: Emitter, op: Operation) -> list[str]:
    a, b = op.args
    out = op.outputs[0].data_type
    inputs = [e.input(a, F32), e.input(b, F32)]
    c = op.options.get("c")
    if c is not None:
        inputs.append(e.input(c, F32))
    y = e.node("Gemm", inputs, F32, alpha=_cast_param(op.options["alpha"], out),
               beta=_cast_param(op.options["beta"], out),
               transA=int(bool(op.options["aTranspose"])),
               transB=int(bool(op.options["bTranspose"])))
    return [e.cast(y, out)]


def _param_or(e: Emitter, operand: MLOperand | None, size: int, fill: float) -> str:
    if operand is None:
        return e.const(np.full((size,), fill), F32, "ones" if fill else "zeros")
    return e.input(operand, F32)


@lowering("batchNormalization")
def batch_normalization(e: Emitter, op: Operation) -> list[str]:
    """(x − mean) / sqrt(variance + ε) · scale + bias.

    When mean, variance and the scale present are known at export time (constants, also
    behind casts/reshapes), the factor
    `scale / sqrt(variance + ε)` is computed at export time in float64 and rounded once, and
    the node chain is `(x + (−mean)) · factor + bias` (Add/Mul/Add with constant operands of
    shape [C, 1, ...]), which onnxruntime folds into a preceding Conv. Otherwise the spec's
    order of operations is emitted (ONNX BatchNormalization folds the parameters into
    `x·a + b` and loses up to ~12 ULP when x ≈ mean)."""
    x, mean, variance = op.args
    out = op.outputs[0].data_type
    axis = int(op.options["axis"])
    along = [x.shape[axis]] + [1] * (x.rank - axis - 1)
    scale, bias = op.options.get("scale"), op.options.get("bias")
    eps64 = _cast_param(op.options["epsilon"], out)
    mean_v, var_v = constant_value(mean), constant_value(variance)
    scale_v = constant_value(scale)
    if mean_v is not None and var_v is not None and (scale is None or scale_v is not None):
        factor = 1.0 / np.sqrt(var_v.astype(np.float64) + eps64)
        if scale_v is not None:
            factor = factor * scale_v.astype(np.float64)
        neg_mean = -mean_v.astype(np.float64)
        y = e.node("Add", [e.input(x, F32), e.const(neg_mean.reshape(along), F32, "bn_neg_mean")],
                   F32)
        y = e.node("Mul", [y, e.const(factor.reshape(along), F32, "bn_factor")], F32)
        if bias is not None:
            bias_v = constant_value(bias)
            b = (e.const(bias_v.astype(np.float64).reshape(along), F32, "bn_bias")
                 if bias_v is not None else e.reshape(e.input(bias, F32), along))
            y = e.node("Add", [y, b], F32)
        return [e.cast(y, out)]

    def param(operand: MLOperand) -> str:
        return e.reshape(e.input(operand, F32), along)

    eps = e.scalar(eps64, F32, "epsilon")
    y = e.node("Sub", [e.input(x, F32), param(mean)], F32)
    std = e.node("Sqrt", [e.node("Add", [param(variance), eps], F32)], F32)
    y = e.node("Div", [y, std], F32)
    if scale is not None:
        y = e.node("Mul", [y, param(scale)], F32)
    if bias is not None:
        y = e.node("Add", [y, param(bias)], F32)
    return [e.cast(y, out)]


@lowering("instanceNormalization")
def instance_normalization(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    out = op.outputs[0].data_type
    nhwc = op.options["layout"] == "nhwc"
    c = x.shape[3] if nhwc else x.shape[1]
    xv = e.input(x, F32)
    if nhwc:
        xv = e.transpose(xv, [0, 3, 1, 2])
    y = e.node("InstanceNormalization",
               [xv, _param_or(e, op.options.get("scale"), c, 1.0),
                _param_or(e, op.options.get("bias"), c, 0.0)], F32,
               epsilon=_cast_param(op.options["epsilon"], out))
    if nhwc:
        y = e.transpose(y, [0, 2, 3, 1])
    return [e.cast(y, out)]


@lowering("layerNormalization")
def layer_normalization(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    out = op.outputs[0].data_type
    axes = [int(a) for a in op.options["axes"]]
    scale, bias = op.options.get("scale"), op.options.get("bias")
    xv = e.input(x, F32)
    if not axes:
        y = e.node("Sub", [xv, xv], F32)
        if scale is not None:
            y = e.node("Mul", [y, e.input(scale, F32)], F32)
        if bias is not None:
            y = e.node("Add", [y, e.input(bias, F32)], F32)
        return [e.cast(y, out)]
    rank = x.rank
    if axes == [rank - 1]:  # residual + bias in the order onnxruntime fuses (see patterns)
        xv = lower_skip_add(e, x) or xv
    perm = [a for a in range(rank) if a not in axes] + axes
    inverse = list(np.argsort(perm))
    norm_shape = [x.shape[a] for a in axes]
    inputs = [e.transpose(xv, perm),
              e.input(scale, F32) if scale is not None else e.const(
                  np.ones(norm_shape), F32, "ones")]
    if bias is not None:
        inputs.append(e.input(bias, F32))
    y = e.node("LayerNormalization", inputs, F32, axis=rank - len(axes),
               epsilon=_cast_param(op.options["epsilon"], out))
    return [e.cast(e.transpose(y, [int(i) for i in inverse]), out)]
