"""The WebNN conformance cases and how a case becomes a graph and is judged.

Cases: the web-platform-tests WebNN conformance cases shipped with this package (`WPT`, the
package data folder `converter/validate/wpt/`: one `<op>.json` per operator file, `INDEX.json`,
`README.md` on the format, `PROVENANCE.md`), read with importlib.resources so an installed
package has them too, plus a few cases written here whose expected values come from float64
numpy formulas (`extra_cases`: l2Pool2d, which the WPT copy lacks, and pools whose windows
reach padding). `case_graph` builds a case's graph with any `MLGraphBuilder`;
`compare_case` judges outputs in the case's metric (ULP or ATOL) and tolerance. `DISPUTED`
names the WPT cases whose expected values disagree with the spec, with the evidence.
"""

from __future__ import annotations

import importlib.resources
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from types import MappingProxyType
from typing import Any

import numpy as np

from converter.core.webnn import MLGraph, MLGraphBuilder, MLOperand
from converter.core.webnn.dtypes import FOUR_BIT_TYPES, numpy_dtype

WPT: Traversable = importlib.resources.files("converter.validate") / "wpt"
"""The WebNN conformance cases (package data)."""
LEGACY_OPTIONS = {"roundingType": "outputShapeRounding"}
"""Option names older WPT files still use, mapped to the current spec names."""
DISPUTED: Mapping[str, str] = MappingProxyType({
    "subgraph:33":
        "WPT's expected output[4] -0.03595118 is 35 float32 ULPs (tolerance 24) from the exact "
        "value: x = (3 - 6) / sqrt(2 + 1e-5) = -2.1213150, gelu(x) = x/2 * erfc(-x/sqrt(2)) = "
        "-0.0359513043 (the expected value loses bits in 1 + erf(x/sqrt(2)) near -1)",
    "mlNumber:9":
        "clamp minValue 3.9 on int64: WPT expects the bound 3 (truncation); the spec's cast of "
        "an MLNumber to an integer type rounds to the nearest integer, ties to even "
        "(webmachinelearning/webnn#647), so the bound is 4 and every element below 4 becomes 4",
})
"""WPT cases (`<file>:<index>`) whose expected values disagree with the spec's definition,
with the evidence. The reference runtime computes the spec's value; `wpt_cases` (the browser
sweep's cases) leaves them out, and the replay tests run them as expected failures."""


@dataclass(frozen=True)
class ConformanceCase:
    """One conformance case: `id` (`<file>:<index>`), `name`, the case dictionary (WPT JSON
    form, see wpt/README.md)."""

    id: str
    name: str
    case: Mapping[str, Any]


# -- cases -------------------------------------------------------------------------------------


def wpt_files(folder: Traversable = WPT) -> Iterator[tuple[str, dict[str, Any]]]:
    """(operator file stem, parsed JSON) of every `<op>.json` of `folder` but INDEX.json, in
    name order."""
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json") and entry.name != "INDEX.json":
            yield entry.name.removesuffix(".json"), json.loads(entry.read_text(encoding="utf-8"))


def wpt_cases(folder: Traversable = WPT) -> list[ConformanceCase]:
    """The conformance cases of `folder` (every `<op>.json` but INDEX.json), without the ones
    marked `lossy_nonfinite` and the `DISPUTED` ones."""
    out = []
    for stem, data in wpt_files(folder):
        for i, case in enumerate(data["cases"]):
            if case.get("lossy_nonfinite") or f"{stem}:{i}" in DISPUTED:
                continue
            out.append(ConformanceCase(f"{stem}:{i}", str(case["name"]), case))
    return out


def _pool_case(name: str, op: str, x: np.ndarray, expected: np.ndarray,
               options: dict[str, Any]) -> ConformanceCase:
    return ConformanceCase(f"extra:{name}", f"{op} float32 4D tensor {name} (float64 formula)", {
        "name": name,
        "graph": {
            "inputs": {"x": {"data": x.ravel().tolist(),
                             "descriptor": {"shape": list(x.shape), "dataType": "float32"}}},
            "operators": [{"name": op, "arguments": [{"input": "x"}, {"options": options}],
                           "outputs": "y"}],
            "expectedOutputs": {"y": {"data": expected.astype(np.float32).ravel().tolist(),
                                      "descriptor": {"shape": list(expected.shape),
                                                     "dataType": "float32"}}}},
        "tolerance": {"metricType": "ULP", "value": 2 * int(np.prod(
            options.get("windowDimensions", x.shape[2:]))) + 2}})


def pool_reference(x: np.ndarray, kind: str, window: Sequence[int], *,
                   padding: Sequence[int] = (0, 0, 0, 0), strides: Sequence[int] = (1, 1),
                   dilations: Sequence[int] = (1, 1), ceil: bool = False) -> np.ndarray:
    """Spec pooling of an NCHW array in float64: `kind` "average" (mean of the real cells of
    each window), "l2" (sqrt of their sum of squares) or "max"; padded cells never count."""
    n, c, hh, ww = x.shape
    sizes = []
    for size, k, p0, p1, s, d in ((hh, window[0], padding[0], padding[1], strides[0],
                                   dilations[0]),
                                  (ww, window[1], padding[2], padding[3], strides[1],
                                   dilations[1])):
        num = size - ((k - 1) * d + 1) + p0 + p1
        sizes.append((-(-num // s) if ceil else num // s) + 1)
    out = np.zeros((n, c, *sizes))
    xs = x.astype(np.float64)
    for i in range(sizes[0]):
        for j in range(sizes[1]):
            rows = [i * strides[0] + a * dilations[0] - padding[0] for a in range(window[0])]
            cols = [j * strides[1] + b * dilations[1] - padding[2] for b in range(window[1])]
            rows = [r for r in rows if 0 <= r < hh]
            cols = [q for q in cols if 0 <= q < ww]
            cells = xs[:, :, rows][:, :, :, cols].reshape(n, c, -1)
            if kind == "average":
                out[:, :, i, j] = cells.mean(axis=2)
            elif kind == "l2":
                out[:, :, i, j] = np.sqrt((cells ** 2).sum(axis=2))
            else:
                out[:, :, i, j] = cells.max(axis=2)
    return out


def extra_cases() -> list[ConformanceCase]:
    """Cases with float64-formula expected values for what the WPT copy lacks (l2Pool2d) or
    covers thinly (pools whose windows reach padding, ceil rounding, dilations)."""
    rng = np.random.default_rng(876)
    x = rng.uniform(0.5, 4, (1, 2, 5, 6)).astype(np.float32)  # no cancellation
    out = []
    for kind, op in (("average", "averagePool2d"), ("l2", "l2Pool2d"), ("max", "maxPool2d")):
        specs: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
            ("window 3x3", {"windowDimensions": [3, 3]}, {"window": [3, 3]}),
            ("window 3x3 padding [1,1,1,1]", {"windowDimensions": [3, 3],
                                              "padding": [1, 1, 1, 1]},
             {"window": [3, 3], "padding": [1, 1, 1, 1]}),
            ("window 3x2 padding [0,2,1,0] strides [2,1]",
             {"windowDimensions": [3, 2], "padding": [0, 2, 1, 0], "strides": [2, 1]},
             {"window": [3, 2], "padding": [0, 2, 1, 0], "strides": [2, 1]}),
            ("window 2x2 strides 2 ceil", {"windowDimensions": [2, 2], "strides": [2, 2],
                                           "outputShapeRounding": "ceil"},
             {"window": [2, 2], "strides": [2, 2], "ceil": True}),
            ("window 2x2 dilations [2,2]", {"windowDimensions": [2, 2], "dilations": [2, 2]},
             {"window": [2, 2], "dilations": [2, 2]}),
        ]
        for name, options, ref in specs:
            window = ref.pop("window")
            expected = pool_reference(x, kind, window, **ref)
            out.append(_pool_case(f"{op} {name}", op, x, expected, options))
    return out


# -- building --------------------------------------------------------------------------------


def wpt_number(x: Any) -> Any:
    """A WPT data value: "NaN"/"Infinity"/"-Infinity" and integer strings (BigInt) decoded. A
    JSON integer past 2**53 was a JavaScript Number written in its shortest form
    (-9223372036854775808 as -9223372036854776000): it stands for that double's exact value."""
    if isinstance(x, str):
        if x in ("NaN", "Infinity", "-Infinity"):
            return float(x.replace("Infinity", "inf"))
        return int(x)
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) > 2**53:
        return int(float(x))
    return x


def case_array(data: Any, desc: Mapping[str, Any]) -> np.ndarray:
    """A case's tensor (`data`, `descriptor`) as a numpy array (int4/uint4 values in their
    int8/uint8 storage array, `converter.core.webnn.dtypes.numpy_dtype`)."""
    shape = tuple(desc["shape"])
    dtype = numpy_dtype(desc["dataType"])
    if isinstance(data, list):
        values = [wpt_number(x) for x in data]
    else:
        values = [wpt_number(data)] * int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "f":
        with np.errstate(over="ignore"):  # WPT's own float16 casts overflow to infinity too
            arr = np.array(values, dtype=np.float64).astype(dtype)
    else:
        arr = np.array(values, dtype=object).astype(dtype)
    return arr.reshape(shape)


def case_graph(case: Mapping[str, Any], builder: MLGraphBuilder, nonfinite: bool = True
               ) -> tuple[MLGraph, dict[str, np.ndarray]]:
    """The graph of a case (constant inputs as constants) and the feeds of its inputs.
    Strings naming operands resolve to them; integer strings (BigInt literals) become
    numbers, and so do "NaN" / "Infinity" / "-Infinity" when `nonfinite` (otherwise they
    stay strings, which the builder rejects). An unknown operator or option is a
    ValueError."""
    desc = case["graph"]
    operands: dict[str, MLOperand] = {}
    feeds: dict[str, np.ndarray] = {}
    for name, spec in desc["inputs"].items():
        arr = case_array(spec["data"], spec["descriptor"])
        data_type = spec["descriptor"]["dataType"]
        if spec.get("constant"):
            operands[name] = (builder.constant(arr, data_type) if data_type in FOUR_BIT_TYPES
                              else builder.constant(arr))
        else:
            operands[name] = builder.input(name, shape=list(arr.shape),
                                           data_type=arr.dtype.name)
            feeds[name] = arr

    numbers = r"-?\d+|NaN|-?Infinity" if nonfinite else r"-?\d+"

    def resolve(value: Any) -> Any:
        if isinstance(value, str) and value in operands:
            return operands[value]
        if isinstance(value, str) and re.fullmatch(numbers, value):
            return wpt_number(value)  # a BigInt literal or a non-finite number
        if isinstance(value, list) and value and all(isinstance(v, str) and v in operands
                                                     for v in value):
            return [operands[v] for v in value]
        return value

    for op in desc["operators"]:
        args, options = [], {}
        for arg in op["arguments"]:
            for key, value in arg.items():  # several keys: positional in order, as WPT's harness
                if key == "options":
                    for opt, val in value.items():
                        options[LEGACY_OPTIONS.get(opt, opt)] = resolve(val)
                else:
                    args.append(resolve(value))
        results = builder.apply(op["name"], args, options)
        names = op["outputs"]
        if isinstance(names, str):
            operands[names] = results[0]
        else:
            for n, r in zip(names, results, strict=True):
                operands[n] = r
    graph = builder.build({name: operands[name] for name in desc["expectedOutputs"]})
    return graph, feeds


# -- comparing -------------------------------------------------------------------------------


def _ordered_bits(x: np.ndarray) -> np.ndarray:
    bits = x.view({2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]).astype(np.int64)
    sign_mask = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}[x.dtype.itemsize]
    return np.where(bits < 0, -(bits & sign_mask), bits)


def distance(actual: np.ndarray, expected: np.ndarray, metric: str) -> np.ndarray:
    """Per element distance in the case's metric (ULP: IEEE bit distance, ±0 equal; ATOL:
    absolute difference; integers: absolute difference); NaN vs NaN is 0, NaN vs a number
    is infinite."""
    a, e = actual.ravel(), expected.ravel()
    if a.dtype.kind == "f":
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        with np.errstate(invalid="ignore", over="ignore"):
            if metric == "ATOL":
                dist = np.abs(a.astype(np.float64) - e.astype(np.float64))
            else:
                dist = np.abs(_ordered_bits(a) - _ordered_bits(e)).astype(np.float64)
            dist = np.where(a == e, 0.0, dist)
        return np.where(nan_a | nan_e, np.where(nan_a == nan_e, 0.0, np.inf), dist)
    diff: np.ndarray = np.abs(a.astype(object) - e.astype(object)).astype(np.float64)
    return diff


def compare_case(case: Mapping[str, Any], outputs: Mapping[str, np.ndarray]
                 ) -> tuple[bool, float, str]:
    """(within tolerance, worst distance, metric) of a case's outputs."""
    tol = case.get("tolerance") or {}
    metric = str(tol.get("metricType", "ULP"))
    budget = float(tol.get("value", 0) or 0)
    worst, ok = 0.0, True
    for name, spec in case["graph"]["expectedOutputs"].items():
        expected = case_array(spec["data"], spec["descriptor"])
        got = outputs.get(name)
        if got is None or got.size != expected.size or got.dtype != expected.dtype:
            return False, math.inf, metric
        d = distance(np.asarray(got).reshape(expected.shape), expected, metric)
        if d.size:
            worst = max(worst, float(d.max()))
            ok = ok and bool((d <= budget).all())
    return ok, worst, metric


__all__ = ["DISPUTED", "LEGACY_OPTIONS", "WPT", "ConformanceCase", "case_array", "case_graph", "compare_case",
           "distance", "extra_cases", "pool_reference", "wpt_cases", "wpt_files", "wpt_number"]
