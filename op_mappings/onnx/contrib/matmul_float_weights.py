"""onnxruntime's block-scaled low-precision float weight matmuls (com.microsoft
MatMulBlockQuantizedFp8Weight, MatMulBlockQuantizedFp4Weight; CUDA kernels) -> a weight
dequantized at conversion time + WebNN matmul.

- Fp8Weight: B [N, K] float8 E4M3 (constant) times b_scale [N, ceil(K / block_size)] float32
  per block of K; Y = A @ Bᵀ + bias, A float16 (weight-only W8A16: no a_scale).
- Fp4Weight (NVFP4): B [N, K/2] uint8, two E2M1 codes per byte (low nibble first: values
  ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}); weight_scale [N, K / block_size] uint8 holding E4M3 bits;
  weight_scale_2 one float32; W = e2m1(B) · weight_scale_2 · e4m3(weight_scale); Y = A @ Wᵀ +
  bias (no input_scale).
The weight is dequantized in float32 then stored in A's type, so the graph holds it at 2
bytes per value (float16).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity, float_operand

MS = "com.microsoft"
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], np.float32)


def e4m3_values(bits: np.ndarray) -> np.ndarray:
    """float32 values of float8 E4M3FN bytes (bias 7, subnormals at exponent 0, NaN at
    exponent 15 with mantissa 7; no infinities)."""
    b = bits.astype(np.int32)
    sign = np.where(b & 0x80, -1.0, 1.0)
    exp, man = (b >> 3) & 0xF, b & 0x7
    value = np.where(exp == 0, man / 8.0 * 2.0 ** -6, (1 + man / 8.0) * 2.0 ** (exp - 7))
    value = np.where((exp == 15) & (man == 7), np.nan, value)
    return (sign * value).astype(np.float32)


def _constant(ctx: ImportContext, node: Node, index: int, what: str) -> np.ndarray:
    value = const_or_none(ctx, node.inputs[index])
    if value is None:
        raise UnsupportedAttribute(f"{node.op_type} {what} (input {index}) must be constant")
    return np.asarray(value)


def _block_scales(scales: np.ndarray, n: int, k: int, block: int, what: str) -> np.ndarray:
    """[N, ceil(K / block)] scales repeated to [N, K]."""
    groups = -(-k // block)
    if scales.shape != (n, groups):
        raise InvalidModel(f"{what} {list(scales.shape)} must be [{n}, {groups}]")
    return np.repeat(scales.astype(np.float32), block, axis=1)[:, :k]


def _matmul(ctx: ImportContext, node: Node, a: Any, weight: np.ndarray, bias_index: int
            ) -> Any:
    """A @ weightᵀ (+ bias), weight [N, K] float32 stored in A's type."""
    b = ctx.builder
    n, k = weight.shape
    if a.rank < 1 or a.shape[-1] != k:
        raise InvalidModel(f"{node.op_type} A {list(a.shape)} must end in K = {k}")
    w = ctx.constant(np.ascontiguousarray(weight.T).astype(a.data_type), what="weight")
    y = (b.matmul(a, w) if a.rank > 1 else
         b.reshape(b.matmul(b.reshape(a, [1, k]), w), [n]))
    if node.input(bias_index):
        bias = float_operand(ctx, node, bias_index, "bias")
        if list(bias.shape) != [n]:
            raise InvalidModel(f"{node.op_type} bias {list(bias.shape)} must be [{n}]")
        y = b.add(y, bias)
    return y


@onnx_op("MatMulBlockQuantizedFp8Weight", since=1, domain=MS)
def matmul_fp8_weight(ctx: ImportContext, node: Node) -> Outputs:
    """A @ (fp8(B) · b_scale)ᵀ + bias (see the module docstring).
    Restrictions: A float16; B and b_scale constant; no a_scale (W8A8)."""
    check_arity(node, (3, 5))
    if node.input(3):
        raise UnsupportedAttribute("MatMulBlockQuantizedFp8Weight a_scale (FP8 activations) "
                                   "is not supported")
    a = float_operand(ctx, node, 0, "A")
    weight = _constant(ctx, node, 1, "B")
    if weight.dtype.name != "float8_e4m3fn" or weight.ndim != 2:
        raise InvalidModel(f"MatMulBlockQuantizedFp8Weight B must be 2-D float8e4m3fn, got "
                           f"{weight.dtype}{list(weight.shape)}")
    n, k = weight.shape
    block = attr_int(node, "block_size", 128)
    if block < 1:
        raise InvalidModel(f"MatMulBlockQuantizedFp8Weight block_size {block} must be positive")
    scale = _block_scales(_constant(ctx, node, 2, "b_scale"), n, k, block, "b_scale")
    return [_matmul(ctx, node, a, weight.astype(np.float32) * scale, 4)]


@onnx_op("MatMulBlockQuantizedFp4Weight", since=1, domain=MS)
def matmul_fp4_weight(ctx: ImportContext, node: Node) -> Outputs:
    """A @ (e2m1(B) · weight_scale_2 · e4m3(weight_scale))ᵀ + bias (see the module docstring).
    Restrictions: A float16; B, weight_scale and weight_scale_2 constant; no input_scale."""
    check_arity(node, (4, 6))
    if node.input(4):
        raise UnsupportedAttribute("MatMulBlockQuantizedFp4Weight input_scale is not "
                                   "supported")
    a = float_operand(ctx, node, 0, "A")
    packed = _constant(ctx, node, 1, "B")
    if packed.dtype != np.uint8 or packed.ndim != 2:
        raise InvalidModel(f"MatMulBlockQuantizedFp4Weight B must be 2-D uint8, got "
                           f"{packed.dtype}{list(packed.shape)}")
    n, k = packed.shape[0], 2 * packed.shape[1]
    codes = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(n, k)
    values = np.where(codes & 0x8, -1.0, 1.0).astype(np.float32) * E2M1[codes & 0x7]
    block = attr_int(node, "block_size", 16)
    raw = _constant(ctx, node, 2, "weight_scale")
    if raw.dtype != np.uint8:
        raise InvalidModel(f"MatMulBlockQuantizedFp4Weight weight_scale must be uint8 (E4M3 "
                           f"bits), got {raw.dtype}")
    scale = _block_scales(e4m3_values(raw), n, k, block, "weight_scale")
    global_scale = _constant(ctx, node, 3, "weight_scale_2").astype(np.float32)
    if global_scale.size != 1:
        raise InvalidModel("MatMulBlockQuantizedFp4Weight weight_scale_2 must be one value")
    return [_matmul(ctx, node, a, values * global_scale.reshape(()) * scale, 5)]
