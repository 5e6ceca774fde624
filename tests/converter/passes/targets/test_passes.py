"""The target rewrite rules (converter.passes.targets.passes) keep results right on the reference
runtime and on onnxruntime: each small graph of tests/converter/passes/targets/cases.py, rewritten
for chromium-tflite, matches its float64 / exact expected values, triggers the rules it is
about and says so in the notes; graphs no rule touches come back unchanged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.passes.targets import load_target
from converter.passes.targets.passes import RULES, lower
from converter.validate import compile_graph
from tests.converter.passes.targets.cases import CASES, RuleCase

TARGET = load_target("chromium-tflite")


def _check(case: RuleCase, outputs: dict[str, Any]) -> None:
    rtol, atol = case.tolerance
    for name, want in case.expected.items():
        got = np.asarray(outputs[name])
        assert got.shape == want.shape, (name, got.shape, want.shape)
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol,
                                       err_msg=case.name)
        else:
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            np.testing.assert_array_equal(got, want, err_msg=case.name)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule_keeps_the_result_on_the_reference_runtime(case: RuleCase) -> None:
    ctx = ML().create_context()
    graph = case.graph(ctx)
    _check(case, ctx.compute(graph, dict(case.feeds)))  # the formula is right
    lowered = lower(graph, TARGET)
    assert set(case.rules) <= set(lowered.applied), (case.rules, lowered.applied)
    assert lowered.graph is not graph
    assert lowered.graph.input_descriptors == graph.input_descriptors
    assert lowered.graph.output_descriptors == graph.output_descriptors
    _check(case, ctx.compute(lowered.graph, dict(case.feeds)))
    for rule in case.rules:
        assert any(f"rule {rule})" in n and n.startswith("chromium-tflite: ")
                   for n in lowered.notes), lowered.notes


ORT_INT64_MINMAX = pytest.mark.xfail(
    reason="onnxruntime 1.31's CPU Min/Max on int64 compare only the low 32 bits "
           "(Min(3, 4294967293) = 4294967293): clamp of uint32 runs as int64 max/min",
    strict=False)


@pytest.mark.parametrize("case", [pytest.param(c, marks=ORT_INT64_MINMAX)
                                  if c.name == "clamp uint32" else c for c in CASES],
                         ids=lambda c: c.name)
def test_rule_keeps_the_result_on_onnxruntime(case: RuleCase) -> None:
    pytest.importorskip("onnxruntime")
    ctx = ML().create_context()
    lowered = lower(case.graph(ctx), TARGET)
    try:
        exe = compile_graph(lowered.graph, "onnxruntime")
    except Exception as exc:  # noqa: BLE001 - a lowering the ONNX export lacks is not ours
        pytest.skip(f"onnxruntime backend cannot take it: {exc}")
    _check(case, exe.run(dict(case.feeds)))


def test_untouched_graph_comes_back_unchanged() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[1, 4, 4, 2], data_type="float32")  # nhwc: no layout-nhwc
    graph = b.build({"y": b.average_pool2d(b.relu(x), window_dimensions=[2, 2],
                                           strides=[2, 2], layout="nhwc")})
    lowered = lower(graph, TARGET)
    assert lowered.graph is graph and not lowered.changed and lowered.notes == []


def test_replay_keeps_every_other_operation_and_shares_constants() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[1, 2, 5, 5], data_type="float32")
    w = b.constant(np.ones((2, 2, 1, 1), np.float32))
    y = b.conv2d(x, w, bias=b.constant(np.ones(2, np.float32)))  # layout-nhwc copies w
    z = b.average_pool2d(y, window_dimensions=[3, 3], padding=[1, 1, 1, 1])
    graph = b.build({"z": b.sigmoid(z), "y": y})
    lowered = lower(graph, TARGET)
    ops = [o.op for o in lowered.graph.operations if o.op != "transpose"]  # layout-nhwc's
    assert ops[0] == "conv2d" and ops[-1] == "sigmoid" and "pad" in ops and "mul" in ops
    assert list(lowered.graph.outputs) == ["z", "y"]
    shared = {id(c.value) for c in graph.constants}
    assert any(id(c.value) in shared for c in lowered.graph.constants)
    feeds = {"x": np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5)}
    want, got = ctx.compute(graph, feeds), ctx.compute(lowered.graph, feeds)
    np.testing.assert_allclose(got["z"], want["z"], rtol=1e-6)
    np.testing.assert_array_equal(got["y"], want["y"])


def test_only_limits_rules_for_a_limits_file(tmp_path: Any) -> None:
    import json

    path = tmp_path / "my_browser.json"
    limits = TARGET.limits_dict()
    assert limits["pad"]["input"]["dataTypes"] == list(TARGET.limits["pad"]["input"]["dataTypes"])
    # another browser's limits (an exact copy of chromium-tflite's is that browser: its rules
    # apply, test_target_data)
    limits["maxTensorByteLength"] = 1 << 30
    path.write_text(json.dumps(limits))
    target = load_target(path)
    assert target.name == "my_browser" and target.browser == ""
    assert all(RULES[r].limits for r in target.rules)
    ctx = ML().create_context()
    pool_case = next(c for c in CASES if c.name.startswith("averagePool2d padding"))
    # behaviour rules: named only (the limits' nhwc preference still applies: layout-nhwc)
    assert "pool-padding" not in lower(pool_case.graph(ctx), target).applied
    pad_case = next(c for c in CASES if c.name == "pad int8")
    lowered = lower(pad_case.graph(ctx), target)
    assert lowered.applied == {"widen-types": 1}
    assert lowered.notes[0].startswith("my_browser: pad #0 (int8 [3x6]): pad on int8 as int32")


def test_target_without_limits_widens_nothing() -> None:
    import dataclasses

    ctx = ML().create_context()
    bare = dataclasses.replace(TARGET, limits={})
    for case in CASES:
        if case.rules == ("widen-types",):
            assert not lower(case.graph(ctx), bare).changed, case.name


def test_inputs_keep_their_order() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    first = b.input("first", shape=[1, 1, 4, 4], data_type="float32")
    second = b.input("second", shape=[1, 1, 4, 4], data_type="float32")
    pooled = b.average_pool2d(second, window_dimensions=[3, 3], padding=[1, 1, 1, 1])
    graph = b.build({"y": b.add(first, pooled), "z": b.relu(second)})
    lowered = lower(graph, TARGET)
    assert lowered.changed
    assert list(lowered.graph.inputs) == list(graph.inputs)
