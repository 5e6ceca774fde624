"""DEQUANTIZE and QUANTIZE.

DEQUANTIZE of float16 (fp16-weight models): an exact widening, kept as a float16 constant +
cast(float32), or folded to a float32 constant when converting with `fold_fp16=True`.
DEQUANTIZE of int8/uint8 -> dequantizeLinear (constant weights stay int8 in the graph);
int16/int32 quantized constants are dequantized at conversion time.
QUANTIZE float -> quantizeLinear (WebNN rounds half to even, LiteRT half away from zero:
±1 LSB on exact ties); integer -> integer requantization = dequantize then quantize.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin, fout, is_quantized


@tflite_op("DEQUANTIZE", since=1, fold=False)
def dequantize(ctx: ImportContext, node: Node) -> Outputs:
    """float16 -> cast (or fold); quantized integers -> dequantizeLinear."""
    name = node.inputs[0]
    info = node.input_infos[0]
    target = node.output_infos[0].dtype
    if info is not None and info.dtype == "float16":
        if ctx.is_constant(name) and ctx.settings.get("fold_fp16"):
            return [np.asarray(ctx.const_value(name)).astype(np.float32)]
        return [ctx.builder.cast(ctx.operand(name), target)]
    if not is_quantized(info):
        raise UnsupportedDataType(f"DEQUANTIZE of an unquantized {info.dtype if info else '?'} "
                                  "tensor")
    y = fin(ctx, node, 0)
    assert y is not None
    if target == "float16":
        y = ctx.builder.cast(y, "float16")
    return [y]


@tflite_op("QUANTIZE", since=1)
def quantize(ctx: ImportContext, node: Node) -> Outputs:
    """quantizeLinear with the output tensor's parameters (requantize for integer inputs)."""
    x = fin(ctx, node, 0)
    assert x is not None
    if x.data_type == "float16":
        x = ctx.builder.cast(x, "float32")
    return [fout(ctx, node, 0, x)]
