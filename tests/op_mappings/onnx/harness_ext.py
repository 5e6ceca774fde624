"""Test helpers for the complex ONNX mappings: one-node models whose omitted optional inputs
and outputs are "" (not graph values), compared with onnxruntime (the oracle)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

import converter
from converter.frontends.onnx.tensors import onnx_elem_type
from tests.op_mappings.onnx.harness import IR_VERSION, check_model


def node_model(op_type: str, inputs: Sequence[tuple[str, np.ndarray | None]],
               attrs: Mapping[str, Any] | None = None, *, opset: int = 17,
               outputs: Sequence[str] = ("y",), constants: Sequence[str] = (),
               domain: str = "") -> onnx.ModelProto:
    """A model with one node; `inputs` are (name, value) pairs in node order, value None for
    an omitted input; `outputs` may contain "" for omitted outputs."""
    graph_inputs, inits, node_inputs = [], [], []
    for name, value in inputs:
        if value is None:
            node_inputs.append("")
            continue
        node_inputs.append(name)
        arr = np.asarray(value)
        if name in constants:
            inits.append(numpy_helper.from_array(arr, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(
                name, onnx_elem_type(arr.dtype.name), list(arr.shape)))
    node = helper.make_node(op_type, node_inputs, list(outputs), domain=domain,
                            **(attrs or {}))
    graph = helper.make_graph([node], "one_node", graph_inputs,
                              [onnx.ValueInfoProto(name=o) for o in outputs if o], inits)
    opsets = [helper.make_opsetid("", opset)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION)
    return onnx.shape_inference.infer_shapes(model)


def check_node(op_type: str, inputs: Sequence[tuple[str, np.ndarray | None]],
               attrs: Mapping[str, Any] | None = None, *, opset: int = 17,
               outputs: Sequence[str] = ("y",), constants: Sequence[str] = (),
               rtol: float = 1e-5, atol: float = 1e-6, domain: str = "",
               **convert_kw: Any) -> converter.ConversionResult:
    """Convert and run a one-node model; compare every output with onnxruntime."""
    model = node_model(op_type, inputs, attrs, opset=opset, outputs=outputs,
                       constants=constants, domain=domain)
    feeds = {n: np.asarray(v) for n, v in inputs if v is not None and n not in constants}
    return check_model(model, feeds, op_type, outputs, rtol, atol, **convert_kw)


def statuses(result: converter.ConversionResult) -> dict[str, list[str]]:
    """op type -> statuses recorded in the conversion report (non-empty ones)."""
    out: dict[str, list[str]] = {}
    for op, st in result.report.by_op().items():
        out[op] = [s for s, names in st.items() if names]
    return out
