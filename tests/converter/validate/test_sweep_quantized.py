"""converter.validate.sweep_quantized: the dequantizeLinear -> operator -> quantizeLinear cases
of the quantized sweep (their expected values checked against float64 numpy formulas written
from the spec, independently of the reference runtime that computes them), the sweep's kinds
of known failures, and the stored sweep of chromium-tflite (every case swept, every failure
fixed by a rule or explained)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.validate.conformance import ConformanceCase, case_array
from converter.validate.sweep import check_sweep, effective
from converter.validate.sweep_quantized import PATTERNS, QTYPES, SWEEP, quantized_cases
from tests.converter.validate.stored_sweep import check_stored_sweep

STORED = (Path(__file__).parents[3] / "converter" / "passes" / "targets" / "chromium-tflite"
          / "sweep_quantized.json")


@pytest.fixture(scope="module")
def cases() -> list[ConformanceCase]:
    return quantized_cases()


def test_every_pattern_variant_type_and_io(cases: list[ConformanceCase]) -> None:
    want = sum(len(v) * (1 if name.startswith("integer ") else 2)
               for name, (_, v) in PATTERNS.items()) * len(QTYPES)
    assert len(cases) == want
    assert len({c.id for c in cases}) == want == len({c.name for c in cases})
    assert [c.id for c in cases] == [f"{SWEEP}:{i}" for i in range(want)]
    ops = Counter(o["name"] for c in cases for o in c.case["graph"]["operators"])
    for op in ("conv2d", "convTranspose2d", "gemm", "matmul", "concat", "averagePool2d",
               "maxPool2d", "resample2d", "pad", "elu", "leakyRelu", "sigmoid", "tanh",
               "softmax", "reduceMax", "relu", "clamp", "add", "mul", "split", "gather",
               "tile", "reverse"):
        assert ops[op] > 0, op
    # the same seed, the same cases; a filter keeps the ids
    again = quantized_cases(["relu"])
    assert again and all(a.case == cases[int(a.id.split(":")[1])].case for a in again)


def _values(case: ConformanceCase) -> tuple[dict[str, np.ndarray], np.ndarray]:
    g = case.case["graph"]
    arrays = {k: case_array(v["data"], v["descriptor"]) for k, v in g["inputs"].items()}
    (out,) = g["expectedOutputs"].values()
    return arrays, case_array(out["data"], out["descriptor"])


def _chain(case: ConformanceCase) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """(the dequantized values of the graph inputs, as float64, in order; the operators)."""
    arrays, _ = _values(case)
    ops = case.case["graph"]["operators"]
    found = []
    for op in ops:
        if op["name"] != "dequantizeLinear":
            continue
        args = {k: v for a in op["arguments"] for k, v in a.items()}
        q = arrays.get(args["input"])
        if q is None or args["input"] not in case.case["graph"]["inputs"] or \
                case.case["graph"]["inputs"][args["input"]].get("constant"):
            continue
        s, z = arrays[args["scale"]].astype(np.float64), arrays[args["zeroPoint"]]
        found.append((q.astype(np.float64) - z) * s)
    return found, ops


def _quantize(y: np.ndarray, case: ConformanceCase) -> np.ndarray:
    arrays, expected = _values(case)
    q = next(o for o in reversed(case.case["graph"]["operators"])
             if o["name"] == "quantizeLinear")
    args = {k: v for a in q["arguments"] for k, v in a.items()}
    s, z = arrays[args["scale"]].astype(np.float64), arrays[args["zeroPoint"]]
    lo, hi = np.iinfo(z.dtype).min, np.iinfo(z.dtype).max
    return np.clip(np.rint(y / s) + z, lo, hi).astype(expected.dtype)


@pytest.mark.parametrize("qtype", QTYPES)
def test_expected_values_follow_the_spec(cases: list[ConformanceCase], qtype: str) -> None:
    """int I/O cases of four patterns against float64 formulas: relu, add, concat,
    averagePool2d (2x2, stride 2, NHWC)."""
    formulas = {
        "relu": lambda xs: np.maximum(xs[0], 0.0),
        "add": lambda xs: xs[0] + xs[1],
        "concat": lambda xs: np.concatenate(xs, axis=3),
        "averagePool2d": lambda xs: xs[0].reshape(1, 3, 2, 3, 2, 4).mean(axis=(2, 4)),
    }
    checked = 0
    for case in cases:
        pattern = case.name.split(f" {qtype} ")[0]
        if pattern not in formulas or f" {qtype} " not in case.name or "int I/O" not in \
                case.name:
            continue
        xs, _ = _chain(case)
        _, expected = _values(case)
        # float32 values of the dequantized inputs: the spec computes the operator in float32
        xs = [x.astype(np.float32).astype(np.float64) for x in xs]
        want = _quantize(formulas[pattern](xs), case)
        assert np.abs(want.astype(np.int64) - expected.astype(np.int64)).max() <= 1, case.name
        assert np.mean(want == expected) > 0.9, case.name  # ties of float32 vs float64
        checked += 1
    assert checked == 13


def test_tolerance_is_one_step(cases: list[ConformanceCase]) -> None:
    for case in cases:
        tol = case.case["tolerance"]
        assert tol["metricType"] == "ATOL"
        if case.name.endswith("int I/O"):
            assert tol["value"] == 1
        else:
            assert 0 < tol["value"] < 0.5


def test_known_failures_count_only_for_their_sweep() -> None:
    doc: dict[str, Any] = {"sweep": SWEEP, "cases": [
        {"id": "quantized:0", "name": "n", "op": "dequantizeLinear+softmax+quantizeLinear",
         "dtypes": "", "options": "", "status": "wrong"}]}
    entry = {"op": "dequantizeLinear+softmax+quantizeLinear", "sweep": SWEEP, "reason": "r"}
    plain = {"op": "clamp", "reason": "a conformance case's"}
    assert check_sweep(doc, [entry, plain]) == ([], [])
    new, stale = check_sweep({**doc, "sweep": "conformance"}, [entry, plain])
    assert len(new) == 1 and len(stale) == 1 and "clamp" in stale[0]


def test_stored_sweep_covers_every_case_and_explains_every_failure(
        cases: list[ConformanceCase]) -> None:
    doc = json.loads(STORED.read_text(encoding="utf-8"))
    assert doc["sweep"] == SWEEP
    assert [(c["id"], c["name"]) for c in doc["cases"]] == [(c.id, c.name) for c in cases]
    check_stored_sweep(doc, "chromium-tflite")
    assert sum(effective(c) == "pass" for c in doc["cases"]) >= \
        sum(c["status"] == "pass" for c in doc["cases"])
