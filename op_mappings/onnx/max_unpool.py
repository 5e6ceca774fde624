"""ONNX MaxUnpool -> WebNN scatterND into zeros.

The indices (as MaxPool's Indices output: positions in the whole flattened N, C, spatial
tensor of the inferred shape (in - 1)·stride - pads + kernel) place the values into a zero
tensor of that shape with scatterND; an `output_shape` input (a constant) larger than the
inferred shape pads the result with zeros at the end of each axis, as the ONNX reference (and
the node test) does; onnxruntime instead reads the indices in the output_shape frame.
Restrictions: output_shape must be a constant not smaller than the inferred shape;
duplicate indices are unspecified in WebNN.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import int_list
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op


@onnx_op("MaxUnpool", since=9, const_inputs=(2,))
def max_unpool(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x, idx = ctx.inputs(node)[:2]
    a = node.attrs
    n = x.rank - 2
    if n < 1 or list(idx.shape) != list(x.shape):
        raise InvalidModel(f"X {list(x.shape)} must be [N, C, D1, ...] and I the same shape, "
                           f"not {list(idx.shape)}")
    kernel = int_list(a["kernel_shape"], "kernel_shape", n, 1)
    strides = int_list(a["strides"], "strides", n, 1) if a.get("strides") else [1] * n
    pads = int_list(a["pads"], "pads", 2 * n, 0) if a.get("pads") else [0] * (2 * n)
    inferred = list(x.shape[:2]) + [
        (x.shape[2 + i] - 1) * strides[i] - (pads[i] + pads[n + i]) + kernel[i]
        for i in range(n)]
    if min(inferred) < 1:
        raise InvalidModel(f"the inferred output shape {inferred} has an empty axis")
    total = int(np.prod(inferred, dtype=np.int64))
    ctx.check_constant(total, x.data_type)
    count = int(np.prod(x.shape, dtype=np.int64))
    zeros = ctx.constant(np.zeros(total, dtype=x.data_type))
    flat = b.scatter_nd(zeros, b.reshape(idx, [count, 1]), b.reshape(x, [count]))
    y = b.reshape(flat, inferred)
    out = ctx.const_input(node, 2)
    if out is not None:
        shape = ints(out)
        if len(shape) != len(inferred) or any(s < t for s, t in zip(shape, inferred,
                                                                   strict=True)):
            raise UnsupportedAttribute(f"MaxUnpool output_shape {shape} smaller than the "
                                       f"inferred shape {inferred} is not supported")
        if shape != inferred:
            y = b.pad(y, [0] * len(shape), [s - t for s, t in zip(shape, inferred,
                                                                   strict=True)])
    return [y]
