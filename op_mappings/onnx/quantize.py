"""ONNX quantization ops -> WebNN quantizeLinear / dequantizeLinear (+ conv2d / matmul).

- QuantizeLinear / DequantizeLinear (opsets 10, 13, 19, 21+): per-tensor (scalar or 1-element
  scale), per-axis (1-D scale along `axis`, default 1) and blocked (`block_size`, opset 21:
  scale has the input's rank, ceil(dim / block_size) on `axis` and the input's dimensions
  elsewhere) scales. Scale and zero point are reshaped to the input's rank (numpy when
  constant, so the op stays native). A missing zero point is 0 of uint8 (or `output_dtype`,
  QuantizeLinear 21+). Both round half to even and saturate like ONNX.
- int4 / uint4 (opset 21): 4-bit initializers become WebNN int4/uint4 constants (kept packed
  in the graph and in the exported weights: a DequantizeLinear of a 4-bit constant is never
  folded to float), and QuantizeLinear to int4/uint4 (zero point type or `output_dtype`)
  gives a 4-bit operand that only DequantizeLinear may read (WebNN has no other 4-bit op).
- A blocked axis whose size is not a multiple of block_size (a partial last block) is padded
  to whole blocks (numpy for constants, WebNN pad otherwise; not for computed 4-bit inputs)
  and the result sliced back.
- DynamicQuantizeLinear: uint8 with x_min = min(0, min(x)), x_max = max(0, max(x)),
  scale = (x_max - x_min) / 255, zero point = saturate(roundEven(-x_min / scale)),
  y = saturate(roundEven(x / scale) + zero point) computed with element-wise ops (the
  quotient rounded to the input type first, as ONNX does).
- QLinearMatMul / QLinearConv / MatMulInteger / ConvInteger: dequantizeLinear of both
  operands (integer ops with scale 1) -> matmul / conv2d (+ bias) -> quantizeLinear (or a
  cast to int32 for the *Integer ops). Per-row `a` / per-column `b` scales (QLinearMatMul),
  per-output-channel `w` scales (QLinearConv, ConvInteger per-channel zero points).
Restrictions: WebNN quantized types (uint8, int8, uint32, int32, int4, uint4: no int16, 2-bit
or float8); int4/uint4 values cannot be graph inputs or outputs; the dequantized integer
products are computed in float32, exact while |sums| < 2^24 (the *Integer ops); QLinear ops
may differ from onnxruntime's fixed-point requantization by one unit at rounding ties; conv
is 1-, 2- or 3-D.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.core.webnn.dtypes import FLOAT_TYPES, FOUR_BIT_TYPES, numpy_dtype, type_range
from converter.core.webnn.limits import OP_LIMITS
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none, norm_axis, scalar
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import conv
from op_mappings.onnx._util import np_dtype

_QUANTIZED = OP_LIMITS["dequantizeLinear"]["input"].data_types
"""The integer types WebNN dequantizes (and quantizes to), 4-bit types included."""


def param_shape(in_shape: Sequence[int], p_shape: Sequence[int], axis: int,
                block_size: int, what: str) -> list[int]:
    """The input-rank shape a scale / zero point of `p_shape` takes. `axis` is the raw ONNX
    attribute: it is only checked (and normalised) for per-axis and blocked parameters, so a
    per-tensor scale ignores it as ONNX does (axis 1 on a rank-1 input is valid there).
    Blocked parameters need `in_shape[axis]` to be a whole number of blocks (see
    `padded_size` for partial last blocks)."""
    rank = len(in_shape)
    size = int(np.prod(p_shape, dtype=np.int64)) if p_shape else 1
    if block_size < 0:
        raise InvalidModel(f"block_size must be >= 0, got {block_size}")
    if not block_size and (len(p_shape) == 0 or (size == 1 and len(p_shape) <= 1)):
        return [1] * rank
    axis = norm_axis(axis, rank)
    if block_size:
        if len(p_shape) != rank:
            raise InvalidModel(f"{what} shape {list(p_shape)} must have the input rank {rank} "
                               "for blocked quantization")
        if in_shape[axis] % block_size or in_shape[axis] // block_size != p_shape[axis]:
            raise InvalidModel(
                f"{what} shape {list(p_shape)} does not match input dimension "
                f"{in_shape[axis]} on axis {axis} in blocks of {block_size}")
        others = [i for i in range(rank) if i != axis and p_shape[i] != in_shape[i]]
        if others:
            raise InvalidModel(f"{what} shape {list(p_shape)} must equal the input shape "
                               f"{list(in_shape)} except on the blocked axis {axis}")
        return list(p_shape)
    if len(p_shape) == 0 or (size == 1 and len(p_shape) <= 1):
        return [1] * rank
    if len(p_shape) != 1 or p_shape[0] != in_shape[axis]:
        raise InvalidModel(f"{what} shape {list(p_shape)} is neither per-tensor nor per-axis "
                           f"for axis {axis} of {list(in_shape)}")
    shape = [1] * rank
    shape[axis] = in_shape[axis]
    return shape


def padded_size(dim: int, block_size: int) -> int:
    """`dim` rounded up to whole blocks (`dim` itself when not blocked)."""
    return -(-dim // block_size) * block_size if block_size > 0 else dim


def quantized_operand(ctx: ImportContext, name: str) -> MLOperand:
    """The operand of value `name`; a 4-bit constant (an `ml_dtypes` int4/uint4 array, as the
    ONNX reader gives INT4/UINT4 tensors) becomes a WebNN int4/uint4 constant (once)."""
    if name in ctx.operands:
        return ctx.operands[name]
    value = const_or_none(ctx, name)
    if value is not None and value.dtype.name in FOUR_BIT_TYPES:
        operand = ctx.builder.constant(value)
        ctx.operands[name] = operand
        return operand
    return ctx.operand(name)


def zeros(ctx: ImportContext, shape: Sequence[int], data_type: str) -> MLOperand:
    """A zero constant of `data_type` (4-bit types included)."""
    return ctx.builder.constant(np.zeros(list(shape), numpy_dtype(data_type)), data_type)


def shaped(ctx: ImportContext, name: str, shape: list[int]) -> MLOperand:
    """Input `name` reshaped to `shape` (a numpy reshape when constant)."""
    value = const_or_none(ctx, name)
    if value is not None:
        if value.size != int(np.prod(shape, dtype=np.int64)):
            raise InvalidModel(f"{name!r} has shape {list(value.shape)}, which does not fit "
                               f"{shape}")
        arr = np.ascontiguousarray(value.reshape(shape))
        if arr.dtype.name in FOUR_BIT_TYPES:
            return ctx.builder.constant(arr)
        return ctx.constant(arr, what=f"{name!r}")
    x = quantized_operand(ctx, name)
    return x if list(x.shape) == shape else ctx.builder.reshape(x, shape)


def qparams(ctx: ImportContext, x: Any, scale_name: str, zp_name: str, axis: int,
            block_size: int, zp_dtype: str, what: str) -> tuple[Any, Any]:
    """(scale, zero point) operands shaped for WebNN; a missing zero point is 0."""
    shape = param_shape(x.shape, ctx.shape(scale_name), axis, block_size, f"{what} scale")
    scale = shaped(ctx, scale_name, shape)
    if zp_name:
        zp = shaped(ctx, zp_name, shape)
    else:
        zp = zeros(ctx, shape, zp_dtype)
    return scale, zp


def _qaxis(node: Node, rank: int) -> int:
    """The raw `axis` attribute (normalised by `param_shape` only where it matters)."""
    return int(node.attrs.get("axis", 1))


def _block_size(node: Node) -> int:
    block = int(node.attrs.get("block_size", 0))
    if block < 0:
        raise InvalidModel(f"block_size must be >= 0, got {block}")
    return block


def _pad_blocks(ctx: ImportContext, name: str, x: MLOperand, axis: int, block: int
                ) -> tuple[MLOperand, int, int]:
    """(x padded on `axis` to whole blocks, the normalised axis, the original size)."""
    if not block:
        return x, axis, 0
    axis = norm_axis(axis, x.rank)
    dim = x.shape[axis]
    target = padded_size(dim, block)
    if target == dim:
        return x, axis, dim
    ends = [0] * x.rank
    ends[axis] = target - dim
    value = const_or_none(ctx, name)
    if value is not None:
        storage = value.astype(numpy_dtype(x.data_type)).reshape(x.shape)
        padded = np.pad(storage, [(0, e) for e in ends])
        return ctx.builder.constant(padded, x.data_type), axis, dim
    if x.data_type in FOUR_BIT_TYPES:
        raise UnsupportedAttribute(f"a partial last block (dimension {dim}, block_size "
                                   f"{block}) of a computed {x.data_type} input")
    return ctx.builder.pad(x, [0] * x.rank, ends), axis, dim


def _unpad(ctx: ImportContext, y: MLOperand, axis: int, dim: int) -> MLOperand:
    if not dim or y.shape[axis] == dim:
        return y
    sizes = list(y.shape)
    sizes[axis] = dim
    return ctx.builder.slice(y, [0] * y.rank, sizes)


def _out_type(node: Node, default: str) -> str:
    """The `output_dtype` attribute as a dtype name, or `default` when absent / 0."""
    code = int(node.attrs.get("output_dtype", 0))
    return np_dtype(code, "output_dtype").name if code else default


# -- numpy folds (constant inputs): QuantizeLinear to 4 bits gives an ml_dtypes array, and a
# -- DequantizeLinear of a 4-bit constant is not folded (the weight stays packed) -------------
def _expand(p: np.ndarray, in_shape: Sequence[int], axis: int, block: int, what: str,
            ) -> np.ndarray:
    """Parameter `p` expanded to `in_shape` (blockwise on `axis`; per-tensor / per-axis by
    broadcasting), in float64."""
    rank = len(in_shape)
    full = list(in_shape)
    if block:
        full[norm_axis(axis, rank)] = padded_size(in_shape[norm_axis(axis, rank)], block)
    shape = param_shape(full, p.shape, axis, block, what)
    out = p.astype(np.float64).reshape(shape)
    if block:
        a = norm_axis(axis, rank)
        out = np.repeat(out, block, axis=a)[tuple(
            slice(0, in_shape[a]) if i == a else slice(None) for i in range(rank))]
    return np.broadcast_to(out, tuple(in_shape))


def _fold_dequantize(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any] | None:
    x, scale = values[0], values[1]
    zp = values[2] if len(values) > 2 else None
    if x.dtype.name not in _QUANTIZED or x.dtype.name in FOUR_BIT_TYPES \
            or scale.dtype.name not in FLOAT_TYPES:
        return None  # 4-bit stays packed; other types get the handler's error
    block = _block_size(node)
    axis = _qaxis(node, x.ndim)
    shape = x.shape if x.ndim else (1,)
    s = _expand(scale, shape, axis, block, "x scale")
    z = _expand(zp, shape, axis, block, "x zero point") if zp is not None else 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        y = ((x.reshape(shape).astype(np.float64) - z) * s).astype(scale.dtype)
    out = _out_type(node, scale.dtype.name)
    if out not in FLOAT_TYPES:
        return None
    return [y.reshape(x.shape).astype(out)]


def _fold_quantize(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any] | None:
    x, scale = values[0], values[1]
    zp = values[2] if len(values) > 2 else None
    if zp is not None:
        out_dtype = zp.dtype
    else:
        code = int(node.attrs.get("output_dtype", 0))
        out_dtype = np_dtype(code, "output_dtype") if code else np.dtype(np.uint8)
    if out_dtype.name not in _QUANTIZED or x.dtype.name not in FLOAT_TYPES:
        return None  # the handler gives the error
    block = _block_size(node)
    axis = _qaxis(node, x.ndim)
    shape = x.shape if x.ndim else (1,)
    s = _expand(scale.astype(x.dtype), shape, axis, block, "y scale")
    z = _expand(zp, shape, axis, block, "y zero point") if zp is not None else 0.0
    lo, hi = type_range(out_dtype.name)
    with np.errstate(all="ignore"):
        q = np.rint(x.reshape(shape).astype(np.float64) / s) + z
    q = np.clip(np.nan_to_num(q, nan=0.0), lo, hi)
    return [q.reshape(x.shape).astype(out_dtype)]


@onnx_op("QuantizeLinear", since=10, fold=_fold_quantize)
def quantize_linear(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    zp_name = node.input(2)
    if zp_name:
        zp_dtype = ctx.dtype(zp_name)
    else:
        zp_dtype = _out_type(node, "uint8")
    if zp_dtype not in _QUANTIZED:
        raise UnsupportedDataType(f"QuantizeLinear output type {zp_dtype} is not a WebNN "
                                  "quantized type")
    if x.rank == 0:
        x = ctx.builder.reshape(x, [1])
    block = _block_size(node)
    x, axis, dim = _pad_blocks(ctx, node.inputs[0], x, _qaxis(node, x.rank), block)
    scale, zp = qparams(ctx, x, node.inputs[1], zp_name, axis, block, zp_dtype, "y")
    if scale.data_type != x.data_type:
        scale = ctx.builder.cast(scale, x.data_type)
    y = _unpad(ctx, ctx.builder.quantize_linear(x, scale, zp), axis, dim)
    if ctx.shape(node.inputs[0]) == ():
        y = ctx.builder.reshape(y, [])
    return [y]


@onnx_op("DequantizeLinear", since=10, fold=_fold_dequantize)
def dequantize_linear(ctx: ImportContext, node: Node) -> Outputs:
    x = quantized_operand(ctx, node.inputs[0])
    if x.data_type not in _QUANTIZED:
        raise UnsupportedDataType(f"DequantizeLinear input type {x.data_type} is not a WebNN "
                                  "quantized type")
    scalar_in = x.rank == 0
    if scalar_in:
        x = ctx.builder.reshape(x, [1])
    block = _block_size(node)
    x, axis, dim = _pad_blocks(ctx, node.inputs[0], x, _qaxis(node, x.rank), block)
    scale, zp = qparams(ctx, x, node.inputs[1], node.input(2), axis, block, x.data_type, "x")
    y = _unpad(ctx, ctx.builder.dequantize_linear(x, scale, zp), axis, dim)
    out = _out_type(node, y.data_type)
    if out != y.data_type:
        y = ctx.builder.cast(y, out)
    return [ctx.builder.reshape(y, []) if scalar_in else y]


def dynamic_uint8(ctx: ImportContext, x: MLOperand
                  ) -> tuple[MLOperand, MLOperand, MLOperand]:
    """DynamicQuantizeLinear's arithmetic on float operand `x`: (saturated quantized values
    as floats in [0, 255], scale, zero point as a float in [0, 255]). The quotient x / scale
    is rounded to x's type before roundEven, as ONNX and onnxruntime compute it."""
    b = ctx.builder
    dt = x.data_type
    zero = scalar(ctx, 0.0, dt)
    lo = b.min(b.reduce_min(x), zero)
    hi = b.max(b.reduce_max(x), zero)
    scale = b.div(b.sub(hi, lo), scalar(ctx, 255.0, dt))
    zp_f = b.clamp(b.round_even(b.neg(b.div(lo, scale))), min_value=0, max_value=255)
    q = b.add(b.round_even(b.div(x, scale)), zp_f)
    return b.clamp(q, min_value=0, max_value=255), scale, zp_f


@onnx_op("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    q, scale, zp_f = dynamic_uint8(ctx, ctx.operand(node.inputs[0]))
    # quantizeLinear is not used: it divides in higher precision, and x / scale can land on
    # the other side of a .5 tie
    return [b.cast(q, "uint8"), scale, b.cast(zp_f, "uint8")]


# -- integer / QLinear matmul and conv -------------------------------------------------------
def dequantize_input(ctx: ImportContext, name: str, scale_name: str, zp_name: str, axis: int,
                     float_dtype: str = "float32") -> MLOperand:
    """Dequantize input `name` with per-tensor or per-axis (along `axis`) parameters; scale
    omitted -> 1 (then the result is the exact integer x - zero point)."""
    x = ctx.operand(name)
    if x.data_type not in _QUANTIZED:
        raise UnsupportedDataType(f"quantized input {name!r} has type {x.data_type}")
    if scale_name:
        shape = param_shape(x.shape, ctx.shape(scale_name), axis, 0, f"{name!r} scale")
        scale = shaped(ctx, scale_name, shape)
    else:
        shape = (param_shape(x.shape, ctx.shape(zp_name), axis, 0, f"{name!r} zero point")
                 if zp_name else [1] * x.rank)
        scale = ctx.constant(np.ones(shape, float_dtype))
    zp = shaped(ctx, zp_name, shape) if zp_name else ctx.constant(np.zeros(shape, x.data_type))
    return ctx.builder.dequantize_linear(x, scale, zp)


def _requant(ctx: ImportContext, y: Any, scale_name: str, zp_name: str) -> Any:
    shape = [1] * y.rank
    scale = shaped(ctx, scale_name, shape)
    zp = shaped(ctx, zp_name, shape) if zp_name else ctx.constant(np.zeros(shape, np.uint8))
    return ctx.builder.quantize_linear(y, scale, zp)


def _to_int32(ctx: ImportContext, y: Any) -> Any:
    return ctx.builder.cast(ctx.builder.round_even(y), "int32")


@onnx_op("QLinearMatMul", since=10)
def qlinear_matmul(ctx: ImportContext, node: Node) -> Outputs:
    i = node.inputs
    ra, rb = len(ctx.shape(i[0])), len(ctx.shape(i[3]))
    if ra < 2 or rb < 2:
        raise UnsupportedAttribute("QLinearMatMul with 1-D operands is not supported")
    a = dequantize_input(ctx, i[0], i[1], i[2], ra - 2)
    bq = dequantize_input(ctx, i[3], i[4], i[5], rb - 1)
    return [_requant(ctx, ctx.builder.matmul(a, bq), i[6], node.input(7))]


@onnx_op("MatMulInteger", since=10)
def matmul_integer(ctx: ImportContext, node: Node) -> Outputs:
    i = node.inputs
    ra, rb = len(ctx.shape(i[0])), len(ctx.shape(i[1]))
    if ra < 2 or rb < 2:
        raise UnsupportedAttribute("MatMulInteger with 1-D operands is not supported")
    a = dequantize_input(ctx, i[0], "", node.input(2), ra - 2)
    bq = dequantize_input(ctx, i[1], "", node.input(3), rb - 1)
    return [_to_int32(ctx, ctx.builder.matmul(a, bq))]


@onnx_op("QLinearConv", since=10)
def qlinear_conv(ctx: ImportContext, node: Node) -> Outputs:
    i = node.inputs
    x = dequantize_input(ctx, i[0], i[1], i[2], 1)
    w = dequantize_input(ctx, i[3], i[4], i[5], 0)
    bias = None
    if node.input(8):
        # int32 bias with scale x_scale * w_scale and zero point 0
        xs = shaped(ctx, i[1], [1])
        ws_shape = [ctx.shape(i[3])[0]] if int(np.prod(ctx.shape(i[4]))) > 1 else [1]
        ws = shaped(ctx, i[4], ws_shape)
        bq = ctx.builder.cast(ctx.operand(node.input(8)), "float32")
        bias = ctx.builder.mul(bq, ctx.builder.mul(xs, ws))
    return [_requant(ctx, conv(ctx, node, x, w, bias), i[6], node.input(7))]


@onnx_op("ConvInteger", since=10)
def conv_integer(ctx: ImportContext, node: Node) -> Outputs:
    i = node.inputs
    x = dequantize_input(ctx, i[0], "", node.input(2), 1)
    w = dequantize_input(ctx, i[1], "", node.input(3), 0)
    return [_to_int32(ctx, conv(ctx, node, x, w, None))]
