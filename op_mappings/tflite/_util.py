"""Helpers shared by TFLite handlers (not a mapping module: no handlers here).

Quantization model (tflite-mapping.md §4): a quantized tensor travels through the graph in
its integer type. `fin` gives a handler the float view of an input (a `dequantizeLinear` with
constant scale/zero-point of the input's rank; int32/int64/int16 quantized constants such as
biases are dequantized at conversion time), `fout` re-quantizes a float result when the
operator's output tensor is quantized. `raw_ok` tells data-movement ops that they may work on
the integers directly (same parameters on input and output).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node, Quantization, TensorInfo
from converter.core.webnn import MLOperand
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.core.webnn.limits import OP_LIMITS
from converter.importer import ImportContext
from op_mappings._common.padding import same_pad
from op_mappings._common.values import ints
from op_mappings._common.values import norm_axis as _norm_axis
from op_mappings._common.values import scalar as _scalar

NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT = range(6)
SAME, VALID = 0, 1
QTYPES = ("int8", "uint8")


# -- small conversions -------------------------------------------------------------------


def norm_axis(axis: int, rank: int, what: str = "axis") -> int:
    """An axis in [-rank, rank) as WebNN's unsigned axis; axis 0 also for rank 0 (TFLite's
    kernels accept it)."""
    return _norm_axis(axis, rank, what, scalar_ok=True)


def norm_axes(axes: Any, rank: int) -> list[int]:
    """Normalised, de-duplicated, sorted axes."""
    return sorted({norm_axis(a, rank) for a in ints(axes)})


def const_ints(ctx: ImportContext, node: Node, i: int) -> list[int]:
    return ints(ctx.const_input(node, i), f"input {i}")


# -- activations and padding --------------------------------------------------------------


def activation(ctx: ImportContext, y: MLOperand, code: int) -> MLOperand:
    """Apply a fused activation (NONE, RELU, RELU_N1_TO_1, RELU6). TANH and SIGN_BIT are
    ignored with a warning, exactly as LiteRT's kernels do (`CalculateActivationRange` maps
    them to an unbounded range)."""
    b = ctx.builder
    code = int(code)
    if code == NONE:
        return y
    if code == RELU:
        return b.relu(y)
    if code == RELU_N1_TO_1:
        return b.clamp(y, min_value=-1.0, max_value=1.0)
    if code == RELU6:
        return b.clamp(y, min_value=0.0, max_value=6.0)
    if code in (TANH, SIGN_BIT):
        ctx.warn(f"fused activation {'TANH' if code == TANH else 'SIGN_BIT'} ignored, as "
                 "LiteRT's kernels ignore it")
        return y
    raise UnsupportedAttribute(f"fused activation {code} is unknown")


def spatial_padding(padding: int, in_hw: Sequence[int], k_hw: Sequence[int],
                    strides: Sequence[int], dilations: Sequence[int] = (1, 1)) -> list[int]:
    """WebNN `[top, bottom, left, right]` for TFLite SAME (0) / VALID (1)."""
    if int(padding) == VALID:
        return [0, 0, 0, 0]
    if int(padding) != SAME:
        raise UnsupportedAttribute(f"padding {padding} is not SAME or VALID")
    t, bm = same_pad(in_hw[0], k_hw[0], strides[0], dilations[0])
    left, r = same_pad(in_hw[1], k_hw[1], strides[1], dilations[1])
    return [t, bm, left, r]


# -- quantization ---------------------------------------------------------------------------


def is_quantized(info: TensorInfo | None) -> bool:
    return info is not None and info.quantized


def qparams(info: TensorInfo, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """scale (float32) and zero point (int64) shaped for the tensor's rank."""
    q = info.quant
    assert q is not None
    if q.details is not None:
        raise UnsupportedAttribute(f"tensor {info.tensor_name!r} uses {q.details} "
                                   "quantization, which is not supported")
    scale, zp = q.scale.astype(np.float32), q.zero_point.astype(np.int64)
    if scale.size > 1:
        shape = [1] * rank
        if not 0 <= q.axis < rank:
            raise InvalidModel(f"tensor {info.tensor_name!r}: quantized_dimension "
                               f"{q.axis} out of range for rank {rank}")
        shape[q.axis] = scale.size
        return scale.reshape(shape), zp.reshape(shape)
    return scale.reshape([1] * rank), zp.reshape([1] * rank)


def dequantize_value(value: np.ndarray, info: TensorInfo) -> np.ndarray:
    """Float32 value of a quantized constant (float64 inside, rounded once); InvalidModel when
    its per-axis scales do not match the size of its quantized dimension."""
    scale, zp = qparams(info, value.ndim)
    axis = info.quant.axis if info.quant is not None else 0
    if scale.size > 1 and scale.size != value.shape[axis]:
        raise InvalidModel(f"tensor {info.tensor_name!r}: {scale.size} per-axis scales for "
                           f"dimension {axis} of size {value.shape[axis]}")
    real: np.ndarray = (value.astype(np.float64) - zp) * scale.astype(np.float64)
    return real.astype(np.float32)


def q_constants(ctx: ImportContext, info: TensorInfo, rank: int, dtype: str
                ) -> tuple[MLOperand, MLOperand]:
    key = ("q", info.name, rank, dtype)
    cache = ctx.memo  # builder constants: one per context (and builder)
    if key not in cache:
        scale, zp = qparams(info, rank)
        cache[key] = (ctx.builder.constant(scale.astype(np.float32)),
                      ctx.builder.constant(zp.astype(dtype)))
    pair: tuple[MLOperand, MLOperand] = cache[key]
    return pair


def fin(ctx: ImportContext, node: Node, i: int) -> MLOperand | None:
    """Operand of input `i` in float when it is quantized (None when omitted)."""
    name = node.input(i)
    if not name:
        return None
    info = node.input_infos[i] if i < len(node.input_infos) else None
    if not is_quantized(info):
        return ctx.operand(name)
    assert info is not None
    cache = ctx.memo  # float views: one per context (and builder)
    if ("dq", name) in cache:
        view: MLOperand = cache[("dq", name)]
        return view
    if ctx.is_constant(name) and info.dtype not in QTYPES:
        out = ctx.constant(dequantize_value(np.asarray(ctx.const_value(name)), info))
    else:
        x = ctx.operand(name)
        if x.data_type not in OP_LIMITS["dequantizeLinear"]["input"].data_types:
            raise UnsupportedDataType(f"quantized {info.dtype} tensor {info.tensor_name!r} "
                                      "is not supported (WebNN dequantizes 8/32-bit integers)")
        scale, zp = q_constants(ctx, info, len(x.shape), x.data_type)
        out = ctx.builder.dequantize_linear(x, scale, zp)
    cache[("dq", name)] = out
    return out


def fin_required(ctx: ImportContext, node: Node, i: int) -> MLOperand:
    """`fin` of an input the op requires; InvalidModel when the node omits it."""
    x = fin(ctx, node, i)
    if x is None:
        raise InvalidModel(f"required input {i} is missing")
    return x


def out_info(node: Node, o: int = 0) -> TensorInfo | None:
    return node.output_infos[o] if o < len(node.output_infos) else None


def fout(ctx: ImportContext, node: Node, o: int, y: MLOperand) -> MLOperand:
    """Re-quantize a float result when output `o` is a quantized tensor; cast when the output
    tensor's type differs otherwise."""
    info = out_info(node, o)
    if info is None:
        return y
    if is_quantized(info):
        if info.dtype not in ("int8", "uint8", "int32"):
            raise UnsupportedDataType(f"quantized {info.dtype} output {info.tensor_name!r} is "
                                      "not supported")
        if y.data_type == info.dtype:
            return y
        scale, zp = q_constants(ctx, info, len(y.shape), info.dtype)
        return ctx.builder.quantize_linear(y, scale, zp)
    return y


def float_in(ctx: ImportContext, node: Node) -> list[MLOperand | None]:
    return [fin(ctx, node, i) for i in range(len(node.inputs))]


def raw_ok(node: Node, inputs: Sequence[int] = (0,), o: int = 0) -> bool:
    """True when the op may run on the stored integers: every listed input is quantized with
    the same parameters as output `o` (or nothing is quantized)."""
    oi = out_info(node, o)
    infos = [node.input_infos[i] for i in inputs]
    if not is_quantized(oi) and not any(is_quantized(t) for t in infos):
        return True
    if not is_quantized(oi) or oi is None:
        return False
    q: Quantization | None = oi.quant
    return all(t is not None and is_quantized(t) and t.dtype == oi.dtype and q is not None
               and q.same_as(t.quant) and not q.per_axis for t in infos)


def data_in(ctx: ImportContext, node: Node, inputs: Sequence[int] = (0,), o: int = 0
            ) -> tuple[list[MLOperand], bool]:
    """Operands for a data-movement op: raw integers when `raw_ok`, else float views.
    Returns (operands, raw)."""
    if raw_ok(node, inputs, o):
        return [ctx.operand(node.inputs[i]) for i in inputs], True
    return [fin_required(ctx, node, i) for i in inputs], False


def finish(ctx: ImportContext, node: Node, y: MLOperand, raw: bool, o: int = 0
           ) -> MLOperand:
    return y if raw else fout(ctx, node, o, y)


def float_dtype(x: MLOperand) -> str:
    return x.data_type if x.data_type in FLOAT_TYPES else "float32"


def empty(node: Node, shape: Sequence[int], o: int = 0) -> np.ndarray:
    """An empty (zero-element) constant for output `o`: WebNN operands cannot be empty, so
    such values stay numpy arrays (CONCATENATION drops them)."""
    info = out_info(node, o)
    dtype = info.dtype if info is not None and info.dtype in _NUMPY_DTYPES else "float32"
    return np.zeros([int(d) for d in shape], dtype)


_NUMPY_DTYPES = ("float32", "float16", "int32", "uint8", "int64", "bool", "int16", "int8",
                 "uint32", "uint64", "uint16", "float64")


def scalar(ctx: ImportContext, value: float, like: MLOperand) -> MLOperand:
    """A rank-0 constant of `like`'s data type."""
    return _scalar(ctx, value, like.data_type)


# -- subgraphs -------------------------------------------------------------------------------


def run_subgraph(ctx: ImportContext, index: int, values: Sequence[Any], tag: str = ""
                 ) -> list[Any]:
    """Convert TFLite subgraph `index` inline with its inputs bound to `values` (numpy
    constants or operands); its outputs (numpy for constants, operands otherwise). Only
    available while importing (handlers that use it are registered with `fold=False`)."""
    return ctx.run_subgraph(int(index), list(values), tag)


@dataclass
class ConversionState:
    """Per-conversion state shared by the control-flow and variable handlers: resource
    variables by handle key, init subgraphs already run, and how many init subgraphs are
    running now (their variable assignments are initial values, not updates)."""

    variables: dict[str, Any] = field(default_factory=dict)
    called_once: set[int] = field(default_factory=set)
    in_init: int = 0
    assigned: set[str] = field(default_factory=set)
    """Carried variables the main graph has assigned so far (reads give the new value)."""


def state(ctx: ImportContext) -> ConversionState:
    """This conversion's `ConversionState` (`ctx.shared`)."""
    return ctx.shared(ConversionState)
