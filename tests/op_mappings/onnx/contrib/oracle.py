"""Test helpers for the com.microsoft optimizer-fusion handlers.

`check_ms` converts a one-node com.microsoft model and compares every output with
onnxruntime: running the node itself where onnxruntime's CPU provider has a kernel for it,
or (`reference=`) running an equivalent graph of standard ONNX ops where the op only has
CUDA/ROCm kernels (BiasAdd, BiasSoftmax, BiasSplitGelu, GemmFastGelu,
RelativePositionBias). Each comparison prints `MAXERR <op> <max abs error>` (visible with
`pytest -s`). `expect_error` checks that a malformed node gives one one-line
ConversionError naming the node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import (
    IR_VERSION,
    assert_close,
    graph_inputs_and_initializers,
    node_model,
    run_ort,
)

MS = "com.microsoft"
Inputs = Sequence[tuple[str, np.ndarray | None]]
ReferenceFn = Callable[[list[str], list[str]], list[onnx.NodeProto]]


def ms_model(op_type: str, inputs: Inputs, attrs: Mapping[str, Any] | None = None, *,
             outputs: Sequence[str] = ("y",), constants: Sequence[str] = (),
             domain: str = MS, opset: int = 17) -> onnx.ModelProto:
    """A one-node model of `op_type` in `domain` (com.microsoft opset 1 imported)."""
    model = node_model(op_type, inputs, attrs, opset=opset, outputs=outputs,
                       constants=constants, domain=domain)
    if not domain:
        model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


def reference_model(nodes: list[onnx.NodeProto], inputs: Inputs, outputs: Sequence[str],
                    constants: Sequence[str] = (), opset: int = 21) -> onnx.ModelProto:
    """A model of standard-op `nodes` (default opset 21) with the same graph inputs and
    initializers as a one-node model over `inputs`."""
    graph_inputs, inits = graph_inputs_and_initializers(inputs, constants)
    graph = helper.make_graph(nodes, "reference", graph_inputs,
                              [onnx.ValueInfoProto(name=o) for o in outputs if o], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=IR_VERSION)


def compare(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
            expected: Mapping[str, np.ndarray], label: str, rtol: float, atol: float,
            backend: str = "reference", **convert_kw: Any) -> converter.ConversionResult:
    """Convert and run `model` (on `backend`); its outputs must be exactly `expected`'s keys,
    each within rtol/atol. Prints the largest absolute error per float output type."""
    result = converter.convert(model, **{"target": "spec", **convert_kw})
    got = result.run(dict(feeds), backend=backend)
    assert sorted(got) == sorted(expected), f"{label}: outputs {list(got)}"
    worst: dict[str, float] = {}
    for name, ref in expected.items():
        assert_close(got[name], ref, rtol, atol, f"{label} output {name}")
        if ref.size and ref.dtype.kind in "fc":
            with np.errstate(invalid="ignore"):  # inf - inf where both are infinite
                diff = np.abs(got[name].astype(np.float64) - ref.astype(np.float64))
            finite = diff[np.isfinite(diff)]
            err = float(finite.max()) if finite.size else 0.0
            worst[ref.dtype.name] = max(worst.get(ref.dtype.name, 0.0), err)
    for dtype, err in worst.items():
        print(f"MAXERR {label}[{dtype}] {err:.3g}")
    return result


def check_ms(op_type: str, inputs: Inputs, attrs: Mapping[str, Any] | None = None, *,
             outputs: Sequence[str] = ("y",), constants: Sequence[str] = (),
             reference: ReferenceFn | None = None, domain: str = MS,
             oracle_domain: str | None = None, opset: int = 17, rtol: float = 1e-5,
             atol: float = 1e-6, **convert_kw: Any) -> converter.ConversionResult:
    """Convert a one-node `op_type` model and compare with onnxruntime.

    `reference(input_names, output_names)` gives standard-op nodes computing the same thing
    (for ops without an onnxruntime CPU kernel); `oracle_domain` runs the node in another
    domain in onnxruntime (an alias onnxruntime only registers there)."""
    model = ms_model(op_type, inputs, attrs, outputs=outputs, constants=constants,
                     domain=domain, opset=opset)
    feeds = {n: np.asarray(v) for n, v in inputs if v is not None and n not in constants}
    names = [n if v is not None else "" for n, v in inputs]
    if reference is not None:
        oracle = reference_model(reference(names, list(outputs)), inputs, outputs, constants)
    elif oracle_domain is not None:
        oracle = ms_model(op_type, inputs, attrs, outputs=outputs, constants=constants,
                          domain=oracle_domain, opset=opset)
    else:
        oracle = model
    expected = run_ort(oracle, feeds)
    expected = {k: v for k, v in expected.items() if k in outputs}
    return compare(model, feeds, expected, op_type, rtol, atol, **convert_kw)


def expect_error(model: onnx.ModelProto, reason: str, *fragments: str) -> str:
    """Converting `model` fails with exactly one node error of `reason` whose one-line text
    names the node and contains every fragment; returns that text."""
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model, target="spec")
    errors = info.value.errors
    assert len(errors) == 1, [str(e) for e in errors]
    err = errors[0]
    text = str(err)
    assert err.reason_code == reason, text
    assert "\n" not in text, text
    node = model.graph.node[0]
    assert (node.name or f"{node.op_type}_0") in text, text
    for fragment in fragments:
        assert fragment in text, text
    return text


def rng_array(*shape: int, dtype: str = "float32", low: float = -3.0, high: float = 3.0,
              seed: int = 0) -> np.ndarray:
    """Uniform random values (deterministic per seed)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(dtype)
