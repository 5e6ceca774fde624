"""Shared helpers for ONNX mapping tests: build a one-node model with onnx.helper, run it in
onnxruntime (the oracle) and through converter.convert() on the reference backend, compare.

`make_model`/`check` take the inputs as a mapping; `node_model`/`check_node` take (name,
value) pairs in node order, so omitted optional inputs and outputs are "" (not graph values),
and accept a custom-op `domain`. `statuses` reads the statuses a conversion report records.

Float outputs must agree within rtol (1e-5 for float32 by default) plus a small atol for
values near zero; integer and bool outputs exactly; dtypes must be identical.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

import converter
from converter.frontends.onnx.tensors import onnx_elem_type

IR_VERSION = 10


def make_model(op_type: str, inputs: Mapping[str, np.ndarray], attrs: Mapping[str, Any] | None = None,
               *, opset: int = 17, outputs: Sequence[str] = ("y",), constants: Sequence[str] = (),
               input_order: Sequence[str] | None = None, domain: str = "") -> onnx.ModelProto:
    """A model with one node (`node_model`). `inputs` are the node's inputs in order (""
    entries are omitted optional inputs: use a key starting with "_" and value None); names
    listed in `constants` become initializers, the rest graph inputs."""
    return node_model(op_type, [(n, inputs.get(n)) for n in input_order or inputs], attrs,
                      opset=opset, outputs=outputs, constants=constants, domain=domain)


def graph_inputs_and_initializers(inputs: Sequence[tuple[str, np.ndarray | None]],
                                  constants: Sequence[str] = ()
                                  ) -> tuple[list[onnx.ValueInfoProto], list[onnx.TensorProto]]:
    """The graph inputs and initializers of (name, value) pairs: names in `constants` become
    initializers, the others graph inputs; None values (omitted inputs) are skipped."""
    graph_inputs, inits = [], []
    for name, value in inputs:
        if value is None:
            continue
        arr = np.asarray(value)
        if name in constants:
            inits.append(numpy_helper.from_array(arr, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(
                name, onnx_elem_type(arr.dtype.name), list(arr.shape)))
    return graph_inputs, inits


def run_ort(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, dict(feeds)), strict=True))


def assert_close(ours: np.ndarray, ref: np.ndarray, rtol: float = 1e-5, atol: float = 1e-6,
                 what: str = "") -> None:
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} != onnxruntime {ref.dtype}"
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != onnxruntime {ref.shape}"
    if ref.dtype.kind == "f":
        if ref.dtype == np.float16:
            rtol, atol = max(rtol, 1e-3), max(atol, 1e-3)
        np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(ours, ref, err_msg=what)


def check(op_type: str, inputs: Mapping[str, np.ndarray | None],
          attrs: Mapping[str, Any] | None = None, *, opset: int = 17,
          outputs: Sequence[str] = ("y",), constants: Sequence[str] = (),
          rtol: float = 1e-5, atol: float = 1e-6, **convert_kw: Any) -> converter.ConversionResult:
    """Convert and run a one-node model and compare every output with onnxruntime."""
    model = make_model(op_type, inputs, attrs, opset=opset, outputs=outputs, constants=constants)
    feeds = {n: np.asarray(v) for n, v in inputs.items() if v is not None and n not in constants}
    return check_model(model, feeds, op_type, outputs, rtol, atol, **convert_kw)


def check_model(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], op_type: str,
                outputs: Sequence[str], rtol: float, atol: float,
                **convert_kw: Any) -> converter.ConversionResult:
    """Convert and run `model` on `feeds`; the named `outputs` ("" = omitted) must be exactly
    the converted outputs, each within rtol/atol of onnxruntime's."""
    expected = run_ort(model, feeds)
    result = converter.convert(model, **{"target": "spec", **convert_kw})
    got = result.run(feeds)
    assert list(got) == [o for o in outputs if o]
    for name in got:
        assert_close(got[name], expected[name], rtol, atol, f"{op_type} output {name}")
    return result


def rand(*shape: int, dtype: str = "float32", low: float = -3.0, high: float = 3.0,
         seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(dtype)


def invalid(op_type: str, inputs: Mapping[str, np.ndarray | None],
            attrs: Mapping[str, Any] | None = None, **kwargs: Any) -> str:
    """The one-line error of a malformed one-node model (`make_model`'s arguments): it must be
    the node's only error, an `invalid_model` one (never an internal error)."""
    from converter.core.errors import ConversionFailed

    model = make_model(op_type, inputs, attrs, **kwargs)
    try:
        converter.convert(model, target="spec")
    except ConversionFailed as exc:
        (err,) = exc.errors
        assert err.reason_code == "invalid_model" and "\n" not in str(err), err
        return str(err)
    raise AssertionError(f"{op_type}: the malformed model converted")


def node_model(op_type: str, inputs: Sequence[tuple[str, np.ndarray | None]],
               attrs: Mapping[str, Any] | None = None, *, opset: int = 17,
               outputs: Sequence[str] = ("y",), constants: Sequence[str] = (),
               domain: str = "") -> onnx.ModelProto:
    """A model with one node; `inputs` are (name, value) pairs in node order, value None for
    an omitted input; `outputs` may contain "" for omitted outputs."""
    graph_inputs, inits = graph_inputs_and_initializers(inputs, constants)
    node_inputs = ["" if value is None else name for name, value in inputs]
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
