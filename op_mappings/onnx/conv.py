"""ONNX Conv -> WebNN conv2d (NCHW input, OIHW filter: the WebNN defaults).

auto_pad becomes explicit padding; pads [x1_b, x2_b, x1_e, x2_e] -> [bH, eH, bW, eW]. 1-D
convolutions are reshaped to 2-D with a unit width; 3-D ones (NCDHW, video models such as
torchvision's r3d_18) run as one conv2d over their depth taps folded into channels, the
output depth folded into the batch.
Restrictions: 1-, 2- or 3-D spatial; float32/float16.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import conv as conv_nd


@onnx_op("Conv", since=1)
def conv(ctx: ImportContext, node: Node) -> Outputs:
    x, w, bias = ctx.inputs(node, optional=(2,))
    return [conv_nd(ctx, node, x, w, bias)]
