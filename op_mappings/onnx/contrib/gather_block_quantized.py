"""com.microsoft GatherBlockQuantized -> WebNN dequantizeLinear of the quantized table +
gather.

output = dequantize(data)[..., indices, ...] along `gather_axis` (default 0), the table
quantized in blocks of `block_size` (default 128) along `quantize_axis` (default 1):
(data - zero_point) * scale, zero point default 0 (int4/uint4) or 2^(bits-1) (uint8).

The table stays quantized in the graph: an int4/uint4 constant (exported two values per
byte; uint8 data with bits 4 in whole blocks: its bytes as they are, neither unpacked nor
copied, and so are zero points packed in whole bytes per row) or uint8 for bits 8, dequantized blockwise by one WebNN dequantizeLinear (a partial
last block is padded at conversion time and sliced off), then gathered. Indices may be
negative ([-s, s-1]); out-of-range indices give zeros as in onnxruntime (checked at
conversion time for constant indices, with a mask otherwise).
Restrictions: data int4 / uint4 (bits 4) or uint8 with bits 4 (two values per byte along the
last axis, zero points packed the same way) or 8 (then gather_axis 0 and quantize_axis the
last axis, as onnxruntime requires); no float8/float4 data or 2-bit values; data, scales and
zero points constant; scales float32 or float16. WebNN gathers no 4-bit data, so the whole
table is dequantized on every run (its size, not the number of indices, sets the cost).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.core.webnn.dtypes import FOUR_BIT_TYPES, to_storage
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none, norm_axis
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import FLOAT_TYPES, attr_int, check_arity
from op_mappings.onnx.contrib._quant_common import block_size_attr, unpack_bits

MS = "com.microsoft"


def _table(ctx: ImportContext, node: Node, bits: int, qa: int, ga: int
           ) -> tuple[np.ndarray, str, np.ndarray | None, int]:
    """(unpacked integer table, its WebNN type, unpacked zero points or None, the default
    zero point)."""
    data = ctx.const_value(node.inputs[0])
    dt = data.dtype.name
    zp_raw = ctx.const_value(node.input(3)) if node.input(3) else None
    if zp_raw is not None and zp_raw.dtype != data.dtype:
        raise InvalidModel(f"GatherBlockQuantized zero_points have data type {zp_raw.dtype}, "
                           f"data has {dt}")
    if dt in FOUR_BIT_TYPES:
        if bits != 4:
            raise InvalidModel(f"GatherBlockQuantized with {dt} data needs bits=4, got {bits}")
        zp = None if zp_raw is None else to_storage(zp_raw, dt)
        return to_storage(data, dt), dt, zp, 0
    if dt != "uint8":
        raise UnsupportedDataType(f"GatherBlockQuantized data of type {dt} is not supported "
                                  "(int4, uint4 or uint8)")
    if ga != 0 or qa != data.ndim - 1:
        raise InvalidModel(f"GatherBlockQuantized with uint8 data needs gather_axis 0 and "
                           f"quantize_axis {data.ndim - 1} (the last), got {ga} and {qa}")
    if bits == 8:
        return data, "uint8", zp_raw, 128
    per = 8 // bits
    values = unpack_bits(data, bits, data.shape[-1] * per)
    zp = None
    if zp_raw is not None:
        zp = unpack_bits(zp_raw, bits, zp_raw.shape[-1] * per)
    return values, "uint4", zp, 8


def _in_range(ctx: ImportContext, y: MLOperand, idx: MLOperand, idx_name: str, size: int,
              ga: int) -> MLOperand:
    """`y` with the gathered slices of out-of-range indices set to 0 (onnxruntime's rule)."""
    b = ctx.builder
    value = const_or_none(ctx, idx_name)
    tail = [1] * (y.rank - ga - idx.rank)
    if value is not None:
        valid = (value >= -size) & (value < size)
        if valid.all():
            return y
        cond = b.constant(valid.astype(np.uint8).reshape([1] * ga + list(valid.shape) + tail))
    else:
        lo = b.constant(np.array(-size, idx.data_type))
        hi = b.constant(np.array(size, idx.data_type))
        ok = b.logical_and(b.greater_or_equal(idx, lo), b.lesser(idx, hi))
        cond = b.reshape(ok, [1] * ga + list(idx.shape) + tail)
    return b.where(cond, y, b.constant(np.zeros([1] * y.rank, y.data_type)))


def _packed_table(ctx: ImportContext, node: Node, bits: int, qa: int, ga: int, block: int
                  ) -> tuple[list[int], MLOperand, MLOperand | None] | None:
    """(table shape, table, zero points or None for the default) as uint4 constants whose
    bytes are the uint8 data's (and packed zero points') as they are, when that is
    possible: uint8 data with bits 4, gather_axis 0, quantized along the last axis in whole
    blocks, zero points omitted or uint8 packed in whole bytes per row. None otherwise
    (`_table` unpacks the values, or says what is wrong)."""
    data = ctx.const_value(node.inputs[0])
    if data.dtype != np.uint8 or bits != 4 or ga != 0 or qa != data.ndim - 1:
        return None
    shape = [*data.shape[:-1], data.shape[-1] * 2]
    if shape[qa] % block:
        return None
    want = shape[:-1] + [shape[-1] // block]
    zp_raw = ctx.const_value(node.input(3)) if node.input(3) else None
    if zp_raw is None:
        zp = None
    elif zp_raw.dtype != np.uint8 or want[-1] % 2 or \
            list(zp_raw.shape) != want[:-1] + [want[-1] // 2]:
        return None
    else:
        zp = ctx.packed_constant(zp_raw, "uint4", want, what=f"constant {node.input(3)!r}")
    table = ctx.packed_constant(data, "uint4", shape, what=f"constant {node.inputs[0]!r}")
    return shape, table, zp


@onnx_op("GatherBlockQuantized", since=1, domain=MS, const_inputs=(0,))
def gather_block_quantized(ctx: ImportContext, node: Node) -> Outputs:
    check_arity(node, (3, 4))
    b = ctx.builder
    bits = attr_int(node, "bits", 4)
    if bits == 2:
        raise UnsupportedAttribute("GatherBlockQuantized bits=2 is not supported (4 or 8 are)")
    if bits not in (4, 8):
        raise InvalidModel(f"GatherBlockQuantized bits must be 4 or 8, got {bits}")
    block = block_size_attr(node, 128)
    rank = len(ctx.shape(node.inputs[0]))
    if rank == 0:
        raise InvalidModel("GatherBlockQuantized data must have rank >= 1")
    qa = norm_axis(attr_int(node, "quantize_axis", 1), rank, "quantize_axis")
    ga = norm_axis(attr_int(node, "gather_axis", 0), rank, "gather_axis")
    packed = _packed_table(ctx, node, bits, qa, ga, block)
    if packed is None:
        values, qtype, zp, zp_default = _table(ctx, node, bits, qa, ga)
        shape = list(values.shape)
    else:
        shape = packed[0]
    blocks = -(-shape[qa] // block)
    want = shape[:qa] + [blocks] + shape[qa + 1:]
    scales = ctx.operand(node.inputs[2])
    if scales.data_type not in FLOAT_TYPES:
        raise UnsupportedDataType(f"GatherBlockQuantized scales have data type "
                                  f"{scales.data_type}; float32 or float16 is needed")
    if list(scales.shape) != want:
        raise InvalidModel(f"GatherBlockQuantized scales have shape {list(scales.shape)}, "
                           f"expected {want} (block_size {block} on axis {qa} of {shape})")
    padded = blocks * block
    if packed is not None:  # the bytes as they are; default zero point 8
        zp_operand = packed[2] if packed[2] is not None else ctx.packed_constant(
            np.frombuffer(b"\x88" * ((int(np.prod(want)) + 1) // 2), np.uint8), "uint4", want)
        table = b.dequantize_linear(packed[1], scales, zp_operand)
    else:
        storage = values.dtype
        if zp is None:
            zp = np.full(want, zp_default, storage)
        elif list(zp.shape) != want:
            if list(zp.shape[:-1]) == want[:-1] and zp.shape[-1] >= want[-1] and \
                    qa == rank - 1:
                zp = np.ascontiguousarray(zp[..., :want[-1]])  # packed: padding nibble dropped
            else:
                raise InvalidModel(f"GatherBlockQuantized zero_points have shape "
                                   f"{list(zp.shape)}, expected {want}")
        if padded != shape[qa]:
            pad = [(0, 0)] * rank
            pad[qa] = (0, padded - shape[qa])
            values = np.pad(values, pad)
        table = b.dequantize_linear(b.constant(values.astype(storage), qtype), scales,
                                    b.constant(zp.astype(storage), qtype))
    if padded != shape[qa]:
        table = b.slice(table, [0] * rank, shape)
    idx = ctx.operand(node.inputs[1])
    if idx.data_type not in ("int32", "int64"):
        raise InvalidModel(f"GatherBlockQuantized indices have data type {idx.data_type}; "
                           "int32 or int64 is needed")
    size = shape[ga]
    safe = idx
    if const_or_none(ctx, node.inputs[1]) is None:  # keep the gather in bounds
        safe = b.clamp(idx, min_value=-size, max_value=size - 1)
    else:
        value = np.clip(ctx.const_value(node.inputs[1]), -size, size - 1)
        safe = b.constant(value.astype(idx.data_type))
    y = b.gather(table, safe, axis=ga)
    return [_in_range(ctx, y, idx, node.inputs[1], size, ga)]
