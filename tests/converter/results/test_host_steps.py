"""HostSteps records and their JSON form (converter/results/host_steps.py): a round trip keeps
everything; a malformed or hostile JSON form is one HostStepsError line, never another
exception, and nothing over the limits is allocated."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import numpy as np
import pytest

from converter.results.host_steps import (
    HostGraph,
    HostInput,
    HostNode,
    HostSteps,
    HostStepsError,
    Limits,
)


def _steps() -> HostSteps:
    return HostSteps(
        nodes=(HostNode("/NonZero", "NonZero", "", ("mask",), ("idx",)),
               HostNode("/TopK", "TopK", "", ("x", "k"), ("v", "i"),
                        {"axis": -1, "largest": np.int64(1), "sorted": True,
                         "scales": [1.5, float("nan"), -math.inf], "mode": b"linear",
                         "names": ("a", "b"), "value": np.arange(6, dtype=np.float16
                                                                 ).reshape(2, 3)})),
        constants={"k": np.array([3], np.int64), "flag": np.array([True, False])},
        inputs=(HostInput("mask", "graph"), HostInput("x", "input")),
        outputs=("idx", "v"), opsets={"": 17})


def test_round_trip_keeps_everything() -> None:
    steps = _steps()
    data = steps.to_json()
    text = json.dumps(data, allow_nan=False)  # non-finite floats are strings
    back = HostSteps.from_json(json.loads(text))
    assert back.to_json() == data
    top = back.nodes[1]
    assert top.attributes["axis"] == -1 and top.attributes["sorted"] == 1
    assert top.attributes["mode"] == "linear" and top.attributes["names"] == ("a", "b")
    assert math.isnan(top.attributes["scales"][1]) and top.attributes["scales"][2] == -math.inf
    np.testing.assert_array_equal(top.attributes["value"], np.arange(6).reshape(2, 3))
    assert top.attributes["value"].dtype == np.float16
    assert back.constants["k"].dtype == np.int64 and back.constants["flag"].dtype == bool
    assert back.graph_inputs == ("mask",) and back.model_inputs == ("x",)
    assert data["nodes"][1]["attributes"]["axis"] == {"int": -1}
    assert data["constants"]["k"] == {"dataType": "int64", "shape": [1],
                                      "base64": "AwAAAAAAAAA="}


def test_summary_counts_ops() -> None:
    assert _steps().summary() == ("host steps: 2 node(s) run on the host after the WebNN graph "
                                  "(NonZero x1, TopK x1)")


def test_records_are_checked() -> None:
    with pytest.raises(HostStepsError, match="not defined before"):
        HostSteps((HostNode("n", "Abs", "", ("nowhere",), ("y",)),), {}, (), ("y",))
    with pytest.raises(HostStepsError, match="control flow"):
        HostNode("n", "Loop", "", (), ())
    with pytest.raises(HostStepsError, match="default ONNX domain"):
        HostNode("n", "Gelu", "com.microsoft", (), ())
    with pytest.raises(HostStepsError, match="never defined"):
        HostSteps((), {}, (), ("y",))
    steps = _steps()
    with pytest.raises(ValueError):
        steps.constants["k"][0] = 1
    with pytest.raises(TypeError):
        steps.constants["new"] = np.zeros(1)  # type: ignore[index]


def _bad(edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(_steps().to_json())
    edit(data)
    return data


BAD = {
    "not an object": lambda d: d.clear() or d.update(x=1),
    "wrong format": lambda d: d.update(format="other"),
    "future version": lambda d: d.update(version=2),
    "bool version": lambda d: d.update(version=True),
    "unknown op": lambda d: d["nodes"][0].update(op="FrobnicateZ"),
    "op with code": lambda d: d["nodes"][0].update(op="Abs();alert(1)"),
    "other domain": lambda d: d["nodes"][0].update(domain="com.microsoft"),
    "control flow": lambda d: d["nodes"][0].update(op="Loop"),
    "huge shape": lambda d: d["constants"]["k"].update(shape=[1 << 40, 1 << 40]),
    "negative dim": lambda d: d["constants"]["k"].update(shape=[-1]),
    "deep rank": lambda d: d["constants"]["k"].update(shape=[1] * 40),
    "bad base64": lambda d: d["constants"]["k"].update(base64="!!!!!!!!!!!!"),
    "short base64": lambda d: d["constants"]["k"].update(base64="AAAA"),
    "unknown dtype": lambda d: d["constants"]["k"].update(dataType="object"),
    "undefined input": lambda d: d["nodes"][0].update(inputs=["nowhere"]),
    "use before definition": lambda d: (d["nodes"][1].update(inputs=["idx", "k"]),
                                        d["nodes"].reverse()),
    "bad attribute": lambda d: d["nodes"][1]["attributes"].update(axis={"graph": {}}),
    "bool int": lambda d: d["nodes"][1]["attributes"].update(axis={"int": True}),
    "huge int": lambda d: d["nodes"][1]["attributes"].update(axis={"int": 1 << 70}),
    "nan word": lambda d: d["nodes"][1]["attributes"].update(axis={"float": "nan!"}),
    "bad source": lambda d: d["inputs"][0].update(source="disk"),
    "name not string": lambda d: d["outputs"].append(7),
    "control character": lambda d: d["outputs"].append("a\nb"),
    "nodes not list": lambda d: d.update(nodes={"a": 1}),
    "bad opset": lambda d: d.update(opsets={"": "17"}),
    "missing field": lambda d: d["nodes"][0].pop("attributes"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_json_is_one_line(case: str) -> None:
    with pytest.raises(HostStepsError) as info:
        HostSteps.from_json(_bad(BAD[case]))
    assert "\n" not in str(info.value) and str(info.value).startswith("host step")


def test_limits_are_enforced_before_decoding() -> None:
    data = _steps().to_json()
    with pytest.raises(HostStepsError, match="over the limit"):
        HostSteps.from_json(data, Limits(nodes=1))
    with pytest.raises(HostStepsError, match="total limit"):
        HostSteps.from_json(data, Limits(total_bytes=8))


def _if_steps() -> HostSteps:
    branch = HostGraph((), ("out",), (HostNode("inner", "Compress", "", ("x", "mask"),
                                               ("out",), {"axis": 0}),))
    empty = HostGraph((), ("none",), (HostNode("c", "Constant", "", (), ("none",),
                                               {"value": np.zeros(0, np.float32)}),))
    return HostSteps((HostNode("if", "If", "", ("cond",), ("y",),
                               {"then_branch": empty, "else_branch": branch}),),
                     {}, (HostInput("cond", "graph"), HostInput("mask", "graph"),
                          HostInput("x", "input")), ("y",))


def test_if_branches_round_trip_and_read_outer_values() -> None:
    steps = _if_steps()
    data = steps.to_json()
    branch = data["nodes"][0]["attributes"]["else_branch"]["graph"]
    assert branch["outputs"] == ["out"] and branch["nodes"][0]["op"] == "Compress"
    back = HostSteps.from_json(json.loads(json.dumps(data)))
    assert back.to_json() == data
    assert back.nodes[0].reads() == ["cond", "x", "mask"]


def test_subgraphs_are_checked() -> None:
    steps = _if_steps().to_json()
    steps["nodes"][0]["attributes"]["else_branch"]["graph"]["nodes"][0]["inputs"] = ["nowhere"]
    with pytest.raises(HostStepsError, match="not defined before"):
        HostSteps.from_json(steps)
    with pytest.raises(HostStepsError, match="graph attributes only on If"):
        HostNode("n", "Abs", "", ("x",), ("y",), {"g": HostGraph((), (), ())})
    deep: dict[str, Any] = {"graph": {"inputs": [], "outputs": [], "nodes": []}}
    for _ in range(12):
        deep = {"graph": {"inputs": [], "outputs": [], "nodes": [
            {"name": "n", "op": "If", "domain": "", "inputs": ["c"], "outputs": [],
             "attributes": {"then_branch": deep, "else_branch": deep}}]}}
    data = _if_steps().to_json()
    data["nodes"][0]["attributes"]["then_branch"] = deep
    with pytest.raises(HostStepsError, match="nested"):
        HostSteps.from_json(data)
