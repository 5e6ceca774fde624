"""ONNX Col2Im -> a grouped convTranspose with a constant one-hot filter.

Column blocks [N, C·K, L] (K = prod(block_shape), L = the block grid) are reshaped to
[N, C·K, *grid]; a transposed convolution with groups = C and the filter
w[c·K + k, 0, *position(k)] = 1 adds every block element at its image position
(stride, dilation, pads as given), which is exactly col2im's scatter-add. 1-D is lifted to
2-D, 3-D uses the depth-tap decomposition of ConvTranspose.
Restrictions: image_shape and block_shape must be constants; 1-, 2- or 3-D images;
float32/float16.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op
from op_mappings.onnx.conv_transpose import _conv_transpose3d


@onnx_op("Col2Im", since=18, const_inputs=(1, 2))
def col2im(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    image = ints(ctx.const_input(node, 1))
    block = ints(ctx.const_input(node, 2))
    n = len(image)
    if n not in (1, 2, 3) or len(block) != n:
        raise UnsupportedAttribute(f"Col2Im with image_shape {image} / block_shape {block} "
                                   "is not supported (1-3 spatial dimensions)")
    a = node.attrs
    strides = ints(a["strides"]) if a.get("strides") else [1] * n
    dilations = ints(a["dilations"]) if a.get("dilations") else [1] * n
    pads = ints(a["pads"]) if a.get("pads") else [0] * (2 * n)
    k = int(np.prod(block))
    nb, ck, length = x.shape
    if ck % k:
        raise InvalidModel(f"Col2Im input dimension 1 ({ck}) is not a multiple of the block "
                           f"size {k}")
    c = ck // k
    grid = [(image[i] + pads[i] + pads[n + i] - (dilations[i] * (block[i] - 1) + 1))
            // strides[i] + 1 for i in range(n)]
    if int(np.prod(grid)) != length:
        raise InvalidModel(f"Col2Im input has {length} blocks, the image needs {grid}")
    out_pad = [image[i] + pads[i] + pads[n + i] - ((grid[i] - 1) * strides[i]
                                                   + dilations[i] * (block[i] - 1) + 1)
               for i in range(n)]
    weight = np.tile(np.eye(k, dtype=x.data_type).reshape(k, 1, *block), (c, 1) + (1,) * n)
    w = ctx.constant(weight)
    xs = b.reshape(x, [nb, ck, *grid])
    pad_pairs = [(pads[i], pads[n + i]) for i in range(n)]
    if n == 3:
        return [_conv_transpose3d(ctx, xs, w, strides, dilations, pad_pairs, out_pad, c)]
    if n == 1:
        xs = b.reshape(xs, [nb, ck, grid[0], 1])
        w = b.reshape(w, [ck, 1, block[0], 1])
        strides, dilations, pad_pairs, out_pad = ([*strides, 1], [*dilations, 1],
                                                  [*pad_pairs, (0, 0)], [*out_pad, 0])
    y = b.conv_transpose2d(xs, w, padding=[v for p in pad_pairs for v in p], strides=strides,
                           dilations=dilations, output_padding=out_pad, groups=c)
    return [b.reshape(y, [nb, c, image[0]]) if n == 1 else y]
