"""Shared oracles of the reference-kernel tests: one-node ONNX models run in onnxruntime (the
independent oracle), graphs run on the reference backend, and exact comparison."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnxruntime as ort
from onnx import helper, numpy_helper

from converter.core.webnn import ML, MLGraphBuilder, MLOperand


def onnx_outputs(op: str, inputs: list[np.ndarray], attrs: dict[str, Any] | None = None,
                 consts: list[np.ndarray | None] | None = None, opset: int = 19,
                 n_out: int = 1, out_type: int | None = None) -> list[np.ndarray]:
    """Run a one-node ONNX model (default domain, `opset`) on the CPU provider: `inputs` are
    graph inputs, `consts` extra initializer inputs (None = omitted optional input); the
    `n_out` outputs have `out_type` (default: the first input's type)."""
    names = [f"in{i}" for i in range(len(inputs))]
    infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                           list(a.shape))
             for n, a in zip(names, inputs, strict=True)]
    inits, node_inputs = [], list(names)
    for i, c in enumerate(consts or []):
        if c is None:
            node_inputs.append("")
            continue
        name = f"c{i}"
        inits.append(numpy_helper.from_array(c, name))
        node_inputs.append(name)
    outs = [f"y{i}" for i in range(n_out)]
    out_type = out_type or helper.np_dtype_to_tensor_dtype(inputs[0].dtype)
    out_infos = [helper.make_tensor_value_info(o, out_type, None) for o in outs]
    node = helper.make_node(op, node_inputs, outs, **(attrs or {}))
    graph = helper.make_graph([node], "g", infos, out_infos, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(outs, dict(zip(names, inputs, strict=True)))


def onnx_run(op: str, inputs: list[np.ndarray], attrs: dict[str, Any], opset: int,
             out_type: int | None = None) -> np.ndarray:
    """The single output of a one-node ONNX model (see `onnx_outputs`)."""
    return onnx_outputs(op, inputs, attrs, opset=opset, out_type=out_type)[0]


def webnn(build: Callable[..., MLOperand], **inputs: np.ndarray) -> np.ndarray:
    """Build a graph from graph inputs named like `inputs` (passed to `build` as keyword
    operands), run it on the reference backend, return its output."""
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    operands = {k: b.input(k, list(a.shape), a.dtype.name) for k, a in inputs.items()}
    graph = b.build({"y": build(b, **operands)})
    return ctx.compute(graph, inputs)["y"]


def webnn_outputs(build: Callable[..., MLOperand | list[MLOperand]], *inputs: np.ndarray
                  ) -> list[np.ndarray]:
    """Build a graph from positional graph inputs `x0`, `x1`, ..., run it on the reference
    backend, return its output(s) as a list."""
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    operands = [b.input(f"x{i}", list(a.shape), a.dtype.name) for i, a in enumerate(inputs)]
    result = build(b, *operands)
    outs = result if isinstance(result, list) else [result]
    graph = b.build({f"y{i}": o for i, o in enumerate(outs)})
    values = ctx.compute(graph, {f"x{i}": a for i, a in enumerate(inputs)})
    return [values[f"y{i}"] for i in range(len(outs))]


def assert_same(got: np.ndarray, ref: np.ndarray) -> None:
    """Same dtype and shape, equal values."""
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)
