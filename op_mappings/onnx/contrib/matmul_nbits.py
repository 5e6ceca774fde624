"""com.microsoft MatMulNBits -> WebNN dequantizeLinear of the packed weight + matmul.

Y = A @ W^T (+ bias) with W[n, k] = (q[n, k] - zero_point[n, g(k)]) * scales[n, g(k)], the
`bits`-wide values q packed in B ([N, k_blocks, blob_size] uint8, low bits first) and g(k) =
k // block_size (or g_idx[k], act-order).

The weight stays quantized in the graph, its bytes used as they are: B's [N, k_blocks,
blob_size] bytes are a uint4 (bits 4: two values per byte, the first in the low nibble, as
WebNN packs them) or uint8 (bits 8) constant [N, k_blocks·block_size], neither unpacked nor
copied (`MLGraphBuilder.packed_constant`), with the [N, k_blocks] scales and zero points as
given, dequantized blockwise along its last axis by one WebNN dequantizeLinear; then
A·W^T as matmul with the transposed weight (+ the bias: one form for every rank of A, the
one the ONNX lowering turns back into onnxruntime's fused MatMulNBits). Zero points: packed uint8 (used as they are when each row is whole bytes, else
unpacked: an odd k_blocks with 4 bits), default 2^(bits-1), or floats (same type as A: the
weight is dequantized with zero point 0 and zero_point·scale, computed at conversion time,
is subtracted per block).
K not a multiple of block_size: A is padded with zeros to whole blocks. g_idx: the weight is
unpacked and its columns regrouped so that each group is one contiguous block (at most
block_size columns, padded with columns that read an appended zero column of A) and A's
columns are gathered in that order (one gather per run; none when g_idx is the default
grouping).
`accuracy_level` is ignored (computation in A's type, as WebNN matmul does).
Restrictions: bits 4 or 8 (not 2); block_size a power of two >= 16; B (and uint8 zero points,
g_idx) constant; A and scales float32 or float16; `weight_prepacked` 0. onnxruntime's CPU
kernel ignores packed uint8 zero points when g_idx is given (it uses 2^(bits-1)): this
mapping follows the operator's definition instead.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity, float_operand
from op_mappings.onnx.contrib._quant_common import (
    bits_attr,
    block_size_attr,
    quant_constant,
    unpack_bits,
)

MS = "com.microsoft"


def _params(ctx: ImportContext, node: Node, index: int, n: int, k_blocks: int, what: str,
            dtype: str) -> np.ndarray | MLOperand:
    """Input `index` ([N, k_blocks] or its N·k_blocks elements) as an [N, k_blocks] numpy
    array (a view, not a copy) when constant, else as a reshaped operand."""
    name = node.inputs[index]
    shape = ctx.shape(name)
    if int(np.prod(shape, dtype=np.int64)) != n * k_blocks or (
            len(shape) == 2 and list(shape) != [n, k_blocks]) or len(shape) > 2:
        raise InvalidModel(f"MatMulNBits {what} has shape {list(shape)}, expected "
                           f"[{n}, {k_blocks}]")
    if ctx.dtype(name) != dtype:
        raise InvalidModel(f"MatMulNBits {what} has data type {ctx.dtype(name)}, A has {dtype}")
    value = const_or_none(ctx, name)
    if value is not None:
        return value.reshape(n, k_blocks)
    operand = ctx.operand(name)
    return operand if list(operand.shape) == [n, k_blocks] else \
        ctx.builder.reshape(operand, [n, k_blocks])


def _operand(ctx: ImportContext, value: np.ndarray | MLOperand) -> MLOperand:
    return value if isinstance(value, MLOperand) else ctx.constant(value)


def _packed_values(ctx: ImportContext, data: np.ndarray, bits: int, shape: list[int],
                   what: str) -> MLOperand:
    """uint8 bytes holding `bits`-wide unsigned values packed low bits first, row-major, as a
    uint4 (bits 4) or uint8 (bits 8) constant of `shape`, the bytes used as they are."""
    if bits == 4:
        return ctx.packed_constant(data, "uint4", shape, what=what)
    return ctx.constant(data.reshape(shape), what=what, produced=False)


def _filled(ctx: ImportContext, value: int, bits: int, shape: list[int]) -> MLOperand:
    """A uint4 (bits 4) or uint8 constant of `shape` holding `value` everywhere (the uint4
    one made packed), one per builder for each value, width and shape (the layers of a
    model share it)."""
    key = ("MatMulNBits filled", value, bits, tuple(shape))
    if key not in ctx.memo:
        count = int(np.prod(shape))
        if bits == 4:
            data = bytes([value | (value << 4)]) * ((count + 1) // 2)  # immutable: not copied
            ctx.memo[key] = ctx.packed_constant(np.frombuffer(data, np.uint8), "uint4", shape)
        else:
            ctx.memo[key] = ctx.constant(np.full(shape, value, np.uint8))
    operand: MLOperand = ctx.memo[key]
    return operand


def _regroup(node: Node, g_idx: np.ndarray, k: int, k_blocks: int, block: int
             ) -> np.ndarray | None:
    """Slot -> column of A for the weight rows regrouped by g_idx (k_blocks·block slots;
    `k` marks a padding slot that reads an appended zero column), or None for the default
    grouping k // block_size."""
    g = np.asarray(g_idx).reshape(-1).astype(np.int64)
    if g.size != k:
        raise InvalidModel(f"MatMulNBits g_idx has {g.size} elements, K is {k}")
    if g.size and (g.min() < 0 or g.max() >= k_blocks):
        raise InvalidModel(f"MatMulNBits g_idx values must lie in [0, {k_blocks}), got "
                           f"[{g.min()}, {g.max()}]")
    if np.array_equal(g, np.arange(k) // block):
        return None
    counts = np.bincount(g, minlength=k_blocks)
    if counts.max() > block:
        raise UnsupportedAttribute(f"MatMulNBits g_idx puts {counts.max()} columns in one "
                                   f"group, more than block_size {block}")
    slots = np.full(k_blocks * block, k, np.int64)
    order = np.argsort(g, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for j in range(k_blocks):
        members = order[starts[j]:starts[j] + counts[j]]
        slots[j * block:j * block + counts[j]] = members
    return slots


@onnx_op("MatMulNBits", since=1, domain=MS, const_inputs=(1,))
def matmul_nbits(ctx: ImportContext, node: Node) -> Outputs:
    check_arity(node, (3, 6))
    b = ctx.builder
    k = attr_int(node, "K", None)
    n = attr_int(node, "N", None)
    bits = bits_attr(node)
    block = block_size_attr(node, None)
    if attr_int(node, "weight_prepacked", 0):
        raise UnsupportedAttribute("MatMulNBits weight_prepacked (an EP-specific layout) is "
                                   "not supported")
    if k <= 0 or n <= 0:
        raise InvalidModel(f"MatMulNBits K and N must be positive, got K={k}, N={n}")
    a = float_operand(ctx, node, 0, "A")
    if a.rank == 0 or a.shape[-1] != k:
        raise InvalidModel(f"MatMulNBits A has shape {list(a.shape)}, its last dimension must "
                           f"be K={k}")
    k_blocks = -(-k // block)
    k_pad = k_blocks * block
    blob = block * bits // 8
    packed = ctx.const_value(node.inputs[1])
    if packed.dtype != np.uint8 or packed.size != n * k_blocks * blob or (
            packed.ndim == 3 and list(packed.shape) != [n, k_blocks, blob]):
        raise InvalidModel(f"MatMulNBits B is {packed.dtype}{list(packed.shape)}, expected "
                           f"uint8[{n}, {k_blocks}, {blob}] for N={n}, K={k}, bits={bits}, "
                           f"block_size={block}")

    dtype = a.data_type
    scales = _params(ctx, node, 2, n, k_blocks, "scales", dtype)
    zp_name = node.input(3)
    float_zp: np.ndarray | MLOperand | None = None
    zp: MLOperand | np.ndarray
    if zp_name and ctx.dtype(zp_name) == "uint8":
        zp_packed = ctx.const_value(zp_name)
        per_row = -(-k_blocks * bits // 8)
        if zp_packed.size != n * per_row:
            raise InvalidModel(f"MatMulNBits packed zero_points have shape "
                               f"{list(zp_packed.shape)}, expected [{n}, {per_row}]")
        if per_row * 8 == k_blocks * bits:  # whole bytes per row: used as they are
            zp = _packed_values(ctx, zp_packed, bits, [n, k_blocks],
                                f"constant {zp_name!r}")
        else:  # each row ends in a padding nibble
            zp = unpack_bits(zp_packed.reshape(n, per_row), bits, k_blocks)
    elif zp_name:
        if ctx.dtype(zp_name) != dtype:
            raise UnsupportedDataType(f"MatMulNBits zero_points of type {ctx.dtype(zp_name)} "
                                      f"(uint8 or A's type {dtype} are supported)")
        float_zp = _params(ctx, node, 3, n, k_blocks, "zero_points", dtype)
        zp = _filled(ctx, 0, bits, [n, k_blocks])
    else:
        zp = _filled(ctx, 1 << (bits - 1), bits, [n, k_blocks])

    slots = None
    if node.input(4):
        slots = _regroup(node, ctx.const_value(node.input(4)), k, k_blocks, block)
    if slots is not None:  # regrouped columns: the weight is unpacked and reordered
        q = unpack_bits(packed.reshape(n, k_blocks * blob), bits, k_pad)
        q = np.concatenate([q, np.zeros((n, 1), np.uint8)], axis=1)[:, slots]
        w_q = quant_constant(ctx, q, bits, False)
        if (slots == k).any():
            zero = b.constant(np.zeros([*a.shape[:-1], 1], dtype))
            a = b.concat([a, zero], a.rank - 1)
        a = b.gather(a, b.constant(slots.astype(np.int32)), axis=a.rank - 1)
    else:  # [N, k_blocks, blob] bytes are the uint4 / uint8 [N, k_pad] weight as it is
        w_q = _packed_values(ctx, packed, bits, [n, k_pad], f"constant {node.inputs[1]!r}")
        if k_pad != k:
            a = b.pad(a, [0] * a.rank, [0] * (a.rank - 1) + [k_pad - k])

    s_operand = _operand(ctx, scales)
    zp_operand = zp if isinstance(zp, MLOperand) else quant_constant(ctx, zp, bits, False)
    w = b.dequantize_linear(w_q, s_operand, zp_operand)  # [N, k_pad]
    if float_zp is not None:
        if isinstance(float_zp, np.ndarray) and isinstance(scales, np.ndarray):
            shift = b.constant((float_zp * scales).astype(dtype))  # rounded like onnxruntime
        else:
            shift = b.mul(_operand(ctx, float_zp), s_operand)
        w = b.reshape(b.sub(b.reshape(w, [n, k_blocks, block]),
                            b.reshape(shift, [n, k_blocks, 1])), [n, k_pad])
    bias = ctx.operand(node.input(5)) if node.input(5) else None
    if bias is not None and (list(bias.shape) != [n] or bias.data_type != dtype):
        raise InvalidModel(f"MatMulNBits bias is {bias.data_type}{list(bias.shape)}, expected "
                           f"{dtype}[{n}]")
    vector = a.rank == 1
    if vector:
        a = b.reshape(a, [1, a.shape[0]])
    y = b.matmul(a, b.transpose(w, permutation=[1, 0]))
    if bias is not None:
        y = b.add(y, bias)
    return [b.reshape(y, [n]) if vector else y]
