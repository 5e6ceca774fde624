"""onnxruntime MatMulBnb4 (com.microsoft; onnxruntime's MatMulBnb4Quantizer, bitsandbytes
FP4 / NF4 weights) -> a float weight constant + WebNN matmul.

B holds the [N, K] weight (transposed, PyTorch's [out_features, in_features]) flattened and
quantized in blocks of `block_size` values: two 4-bit codes per byte, the first in the high
nibble; a code c of block i stands for table[c] · absmax[i], table the FP4 (quant_type 0) or
NF4 (quant_type 1) code book of bitsandbytes (as onnxruntime's kernels hold it). The weight
is dequantized at conversion time (float32 arithmetic, then A's type), so the graph holds it
as float (8x / 4x the packed size for float32 / float16).
Y = A @ Bᵀ, A [..., K] -> Y [..., N] (transB = 1, the default and what the quantizer
writes; transB = 0, the backward-pass form, is refused: onnxruntime's CPU kernel does not
compute A @ B there, so there is no reference to match).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity, float_operand

MS = "com.microsoft"

FP4_TABLE = np.array([0.0, 5.208333333e-03, 0.66666667, 1.0, 0.33333333, 0.5, 0.16666667,
                      0.25, -0.0, -5.208333333e-03, -0.66666667, -1.0, -0.33333333, -0.5,
                      -0.16666667, -0.25], np.float32)
NF4_TABLE = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                      -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                      0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                      0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                      0.7229568362236023, 1.0], np.float32)


def dequantize_bnb4(packed: np.ndarray, absmax: np.ndarray, quant_type: int, block: int,
                    n: int, k: int) -> np.ndarray:
    """The [N, K] float32 weight of MatMulBnb4's B and absmax."""
    codes = np.stack([packed >> 4, packed & 0x0F], axis=-1).reshape(-1)[:n * k]
    table = FP4_TABLE if quant_type == 0 else NF4_TABLE
    scale = np.repeat(absmax.astype(np.float32), block)[:n * k]
    return (table[codes] * scale).reshape(n, k)


@onnx_op("MatMulBnb4", since=1, domain=MS)
def matmul_bnb4(ctx: ImportContext, node: Node) -> Outputs:
    """A @ dequant(B)ᵀ (see the module docstring).
    Restrictions: B and absmax constant; A float32 or float16; quant_type 0 (FP4) or 1 (NF4);
    block_size a power of two >= 16; transB 1 and training_mode 0."""
    check_arity(node, (3, 3))
    a = float_operand(ctx, node, 0, "A")
    n, k = attr_int(node, "N", None), attr_int(node, "K", None)
    block = attr_int(node, "block_size", None)
    quant_type = attr_int(node, "quant_type", None)
    trans_b = attr_int(node, "transB", 1)
    if attr_int(node, "training_mode", 0) or trans_b != 1:
        raise UnsupportedAttribute("MatMulBnb4 training_mode=1 / transB=0 (the backward-pass "
                                   "forms) are not supported")
    if quant_type not in (0, 1):
        raise InvalidModel(f"MatMulBnb4 quant_type must be 0 (FP4) or 1 (NF4), got "
                           f"{quant_type}")
    if block < 16 or block & (block - 1) or n < 1 or k < 1:
        raise InvalidModel(f"MatMulBnb4 block_size {block} must be a power of two >= 16 and "
                           f"N, K ({n}, {k}) positive")
    packed = const_or_none(ctx, node.inputs[1])
    absmax = const_or_none(ctx, node.inputs[2])
    if packed is None or absmax is None:
        raise UnsupportedAttribute("MatMulBnb4 B and absmax must be constant")
    blocks = -(-n * k // block)
    if packed.dtype != np.uint8 or packed.size != (n * k + 1) // 2 or absmax.size != blocks:
        raise InvalidModel(f"MatMulBnb4 B ({packed.dtype}, {packed.size} values) and absmax "
                           f"({absmax.size}) must be uint8 [{(n * k + 1) // 2}] and "
                           f"[{blocks}]")
    weight = dequantize_bnb4(packed.reshape(-1), absmax.reshape(-1), quant_type, block, n, k)
    if a.rank < 1 or a.shape[-1] != k:
        raise InvalidModel(f"MatMulBnb4 A {list(a.shape)} must end in K = {k}")
    b = ctx.builder
    w_op = ctx.constant(np.ascontiguousarray(weight.T).astype(a.data_type), what="dequantized B")
    if a.rank == 1:
        return [b.reshape(b.matmul(b.reshape(a, [1, k]), w_op), [n])]
    return [b.matmul(a, w_op)]
