"""Every built-in target profile (converter/passes/targets/*/): it loads, its target.json names a
description, a browser and known rules, and its limits.json has the shape
`MLContext.opSupportLimits()` returns: top-level preferredInputLayout, maxTensorByteLength,
input/constant/output; per op (a spec op: converter/core/webnn/limits.py's table) per operand role
(one of the spec's roles for that op) `dataTypes` (spec data types, no repeats) and
`rankRange` {min <= max}."""

from __future__ import annotations

import json
from typing import Any

import pytest

from converter.core.webnn.dtypes import ALL_DATA_TYPES
from converter.core.webnn.limits import OP_LIMITS
from converter.passes.targets import TARGETS_DIR, known_targets, load_target
from converter.passes.targets.passes import RULES

TOP = ("input", "constant", "output")


def test_three_chromium_profiles_ship() -> None:
    assert {"chromium-tflite", "chromium-dml", "chromium-coreml"} <= set(known_targets())


def _check_tensor(where: str, limits: Any) -> None:
    assert isinstance(limits, dict) and set(limits) <= {"dataTypes", "rankRange"}, where
    types = limits["dataTypes"]
    assert types and len(set(types)) == len(types), where
    assert set(types) <= set(ALL_DATA_TYPES), f"{where}: {set(types) - set(ALL_DATA_TYPES)}"
    if "rankRange" in limits:
        r = limits["rankRange"]
        assert isinstance(r["min"], int) and isinstance(r["max"], int), where
        assert 0 <= r["min"] <= r["max"], where


@pytest.mark.parametrize("name", known_targets())
def test_profile_has_the_op_support_limits_shape(name: str) -> None:
    meta = json.loads((TARGETS_DIR / name / "target.json").read_text(encoding="utf-8"))
    assert meta["name"] == name and meta["description"]
    if "intersection" in meta:  # portable: computed from the profiles it names
        assert set(meta["intersection"]) <= set(known_targets()) - {name}
        limits = load_target(name).limits_dict()
    else:
        assert set(meta["rules"]) <= set(RULES)
        limits = json.loads((TARGETS_DIR / name / "limits.json").read_text(encoding="utf-8"))
        assert limits["preferredInputLayout"] in ("nchw", "nhwc")
    assert isinstance(limits["maxTensorByteLength"], int) and limits["maxTensorByteLength"] > 0
    for key in TOP:
        _check_tensor(f"{name} {key}", limits[key])
    ops = {k: v for k, v in limits.items()
           if k not in (*TOP, "preferredInputLayout", "maxTensorByteLength")}
    assert set(ops) <= set(OP_LIMITS), set(ops) - set(OP_LIMITS)
    for op, roles in ops.items():
        assert set(roles) <= set(OP_LIMITS[op]), (op, set(roles) - set(OP_LIMITS[op]))
        assert "output" in roles or "outputs" in roles or "output0" in roles, op
        for role, tensor in roles.items():
            _check_tensor(f"{name} {op}.{role}", tensor)
    target = load_target(name)
    assert target.browser and target.limits_dict() == limits


def test_backends_differ_where_chromium_says_they_do() -> None:
    dml, coreml, tflite = (load_target(n).limits for n in
                           ("chromium-dml", "chromium-coreml", "chromium-tflite"))
    # Core ML takes no int64 anywhere, DirectML no int64 in Core-ML-style gather indices.
    assert "int64" not in coreml["input"]["dataTypes"]
    assert "int64" not in coreml["gather"]["indices"]["dataTypes"]
    assert "int64" in dml["gather"]["indices"]["dataTypes"]
    assert coreml["input"]["rankRange"]["max"] == 5 and dml["input"]["rankRange"]["max"] == 8
    assert tflite["preferredInputLayout"] == "nhwc" and dml["preferredInputLayout"] == "nchw"
