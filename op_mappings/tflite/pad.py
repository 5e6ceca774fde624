"""PAD, PADV2, MIRROR_PAD -> WebNN pad (paddings must be constant).

PAD on a quantized tensor pads the stored integers with the zero point (= real 0); PADV2
pads with its constant value input. MIRROR_PAD REFLECT -> mode "reflection"; SYMMETRIC
(edge repeated, no WebNN mode) -> slices + reverse + concat per axis.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, dequantize_value, finish, is_quantized


def _paddings(ctx: ImportContext, node: Node, rank: int) -> tuple[list[int], list[int]]:
    p = np.asarray(ctx.const_input(node, 1)).astype(np.int64).reshape(-1, 2)
    if p.shape[0] != rank or np.any(p < 0):
        raise InvalidModel(f"paddings {p.tolist()} do not fit rank {rank}")
    return [int(v) for v in p[:, 0]], [int(v) for v in p[:, 1]]


@tflite_op(("PAD", "PADV2"), since=1, const_inputs=(1,))
def pad(ctx: ImportContext, node: Node) -> Outputs:
    """Constant padding (0, the zero point, or PADV2's value)."""
    (x,), raw = data_in(ctx, node)
    begins, ends = _paddings(ctx, node, len(x.shape))
    value: float | int = 0
    info = node.input_infos[0]
    if node.op_type == "PADV2" and len(node.inputs) > 2 and node.inputs[2]:
        v = np.asarray(ctx.const_input(node, 2)).reshape(-1)
        vinfo = node.input_infos[2]
        if raw and is_quantized(info):
            if vinfo is not None and is_quantized(vinfo) and vinfo.quant is not None \
                    and info is not None and not vinfo.quant.same_as(info.quant):
                real = float(dequantize_value(v, vinfo)[0])
                assert info.quant is not None
                v = np.array([np.round(real / info.quant.scale[0]) + info.quant.zero_point[0]])
            value = int(v[0])
        elif vinfo is not None and is_quantized(vinfo):
            value = float(dequantize_value(v, vinfo)[0])
        else:
            value = v[0].item()
    elif raw and is_quantized(info) and info is not None and info.quant is not None:
        value = int(info.quant.zero_point[0])
    return [finish(ctx, node, ctx.builder.pad(x, begins, ends, value=value), raw)]


def _symmetric(ctx: ImportContext, x: MLOperand, begins: list[int], ends: list[int]
               ) -> MLOperand:
    b = ctx.builder
    for axis, (pb, pe) in enumerate(zip(begins, ends, strict=True)):
        if not pb and not pe:
            continue
        dim = x.shape[axis]
        if pb > dim or pe > dim:
            raise InvalidModel(f"SYMMETRIC padding {pb}/{pe} exceeds dim {dim}")
        parts = []
        zeros = [0] * len(x.shape)
        if pb:
            sizes = list(x.shape)
            sizes[axis] = pb
            parts.append(b.reverse(b.slice(x, zeros, sizes), axes=[axis]))
        parts.append(x)
        if pe:
            starts = list(zeros)
            starts[axis] = dim - pe
            sizes = list(x.shape)
            sizes[axis] = pe
            parts.append(b.reverse(b.slice(x, starts, sizes), axes=[axis]))
        x = b.concat(parts, axis)
    return x


@tflite_op("MIRROR_PAD", since=1, const_inputs=(1,))
def mirror_pad(ctx: ImportContext, node: Node) -> Outputs:
    """REFLECT (edge excluded) or SYMMETRIC (edge repeated)."""
    (x,), raw = data_in(ctx, node)
    begins, ends = _paddings(ctx, node, len(x.shape))
    if int(node.attrs["mode"]) == 0:
        y = ctx.builder.pad(x, begins, ends, mode="reflection")
    else:
        y = _symmetric(ctx, x, begins, ends)
        if y is x:
            y = ctx.builder.identity(x)
    return [finish(ctx, node, y, raw)]
