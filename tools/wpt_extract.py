"""Turn WebNN web-platform-tests conformance files (`webnn/conformance_tests/<op>.https.any.js`)
into the JSON case files of `converter/validate/wpt/` (format: its README.md).

The test arrays are JavaScript object literals (BigInt literals, NaN, Infinity, expressions,
shared constants), so the file is not parsed here: Node (>= 18) runs it in a `vm` sandbox in
which `webnn_conformance_test(tests, build, tolerance)` only records its arguments, and every
case is written out with its tolerance computed by the file's own tolerance function.
Nothing is edited by hand; a file the sandbox cannot run is an error naming the file.

    python tools/wpt_extract.py SRC/*.https.any.js --out converter/validate/wpt \
        --repo marco-c/gecko-dev-comments-removed --commit 22caf165... \
        --prefix testing/web-platform/tests/webnn/conformance_tests \
        --utils SRC/resources/utils.tolerance.js

writes `<out>/<stem>.json` per source file and updates the file's entry (`ops.<stem>`) and the
totals of `<out>/INDEX.json`. Restrictions: only files that hand their cases to
`webnn_conformance_test` are extracted (files with hand-written `promise_test` bodies, such as
buffer or parallel-dispatch tests, yield no cases and are reported); a tolerance function that
needs the shape of an operator's output gets it from our builder's shape computation (as
WPT's harness passes `intermediateOperands`); one that still throws leaves the case's
`tolerance` null with the error in `tolerance_error`. `--utils` names a file
holding the tolerance functions of WPT's `webnn/resources/utils.js` (`getPrecisionTolerance`,
`getZeroULPTolerance`, `getExpectedDataTypeOfSingleOutput`, ...), run before each test file;
WPT code is not kept in this repository.

Sources and coverage of `converter/validate/wpt/` (2,458 cases in 106 files; per file the
repository, commit and path are in its JSON and in INDEX.json):

- extracted by this script from marco-c/gecko-dev-comments-removed @
  22caf165adaaf07f964f8e32d6c314590ce4a402, `testing/web-platform/tests/webnn/
  conformance_tests/` (44 files): arg_min_max, averagePool2d, constant-reshape-optimization,
  cos, cumulative_sum, dequantizeLinear, erf, gatherElements, gatherND, gelu, gemm, gru,
  gru_cell, identity, is_infinite, is_nan, l2Pool2d, logical_and, logical_or, logical_xor,
  lstm, lstm_cell, maxPool2d, mlNumber, not_equal, pad, prelu, qdq_subgraph, quantizeLinear,
  reciprocal, resample2d, reverse, round_even, scatterElements, scatterND, sign, sin, softplus,
  softsign, subgraph, tan, tile, triangular, where; plus clamp's cases 44-50 (`--merge`);
- extracted by this script from web-platform-tests/wpt (the commit in each file's provenance)
  (8 regression files): cast_rounding, comparison-select, float16-transport,
  instance-normalization-affine-layout, instance-normalization-zero-epsilon,
  quantize_linear_subgraph (since dropped from WPT), reduce-log-sum-small-values,
  resample2d-nearest-half-pixel;
- converted earlier from rustnn's JSON of web-platform-tests/wpt @ 5552002157 (2025-12-13)
  (54 files, `source: rustnn-json` in INDEX.json; not re-extracted here): abs, add,
  batch_normalization, cast, ceil, clamp, concat, conv2d, conv_transpose2d, div, elu, equal,
  exp, expand, floor, gather, greater, greater_or_equal, hard_sigmoid, hard_swish,
  instance_normalization, layer_normalization, leaky_relu, lesser, lesser_or_equal, linear,
  log, logical_not, matmul, max, min, mul, neg, pow, reduce_l1 ... reduce_sum_square (10),
  relu, reshape, sigmoid, slice, softmax, split, sqrt, sub, tanh, transpose.

The gecko sources are too large to fetch; they were read in 16,000-character pages
(`read_file`) and transcribed into `.https.any.js` files with the values, names and operator
lists verbatim (repeated tensors folded into constants and case functions). Left out, with the
reason: cast-storage (not in the gecko copy; in web-platform-tests/wpt its promise tests check
MLTensor storage bits, no `webnn_conformance_test` cases) and float16-transport's MLTensor
ping-pong tests (the same); the API files without graph cases (buffer, byob_*, parallel-*,
compute-arraybufferview-*, graph_devices, gpu/*); files the gecko index holds only at other
commits (batch_normalization_constant, constant, elementwise_*, pooling, reduction,
inputs-are-not-modified, inputs-with-special-names, operations-with-special-names: older
layouts of the suite or files absent at 22caf165).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from converter.core.webnn import ML, MLGraphBuilder
from converter.validate.conformance import case_graph

SANDBOX_JS = r"""
const vm = require('vm');
const fs = require('fs');
const utils = fs.readFileSync(process.argv[3], 'utf8');
const src = utils + '\n' + fs.readFileSync(process.argv[2], 'utf8');
const shapes = process.argv[4] ? JSON.parse(fs.readFileSync(process.argv[4], 'utf8')) : {};
const captured = [];
const noop = () => {};
const sandbox = {
  // (tests, build, tolerance); older files call it per test as (build, tolerance, test)
  webnn_conformance_test: (...a) => captured.push(typeof a[0] === 'function' ?
      {tests: [a[2]], tolerance: a[1]} : {tests: a[0], tolerance: a[2]}),
  buildAndExecuteGraph: noop, buildGraphAndCompute: noop, buildGraphAndCheck: noop,
  promise_setup: noop, promise_test: noop, test: noop, setup: noop, done: noop,
  navigator: {ml: {}}, location: {search: ''}, self: {}, globalThis: {},
  console, Math, Number, Array, Object, BigInt, JSON, Float32Array, Float64Array,
  Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array,
  BigInt64Array, BigUint64Array, Infinity, NaN,
};
if (typeof Float16Array !== 'undefined') sandbox.Float16Array = Float16Array;
sandbox.structuredClone = structuredClone;
vm.createContext(sandbox);
vm.runInContext(src, sandbox, {filename: process.argv[2]});
const plain = (v) => {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (ArrayBuffer.isView(v)) return Array.from(v, plain);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = plain(x);
    return o;
  }
  return v;
};
const cases = [];
for (const {tests, tolerance} of captured) {
  for (const t of tests) {
    if (t === undefined) continue;  // an array hole (`[a, , b]`), skipped as forEach does
    const c = {name: t.name, graph: plain(t.graph)};
    const intermediate = shapes[String(cases.length)] || {};
    try {
      const tol = typeof tolerance === 'function' ? tolerance(t.graph, intermediate) : null;
      c.tolerance = tol ? plain(tol) : null;
      c.tolerance_source = tol ? 'file' : 'none';
    } catch (e) {
      c.tolerance = null;
      c.tolerance_source = 'none';
      c.tolerance_error = String(e);
    }
    cases.push(c);
  }
}
process.stdout.write(JSON.stringify(cases));
"""

def _count(shape: list[int]) -> int:
    return math.prod(shape) if shape else 1


def check_case(case: dict[str, Any], where: str) -> None:
    """Every tensor's data has as many values as its shape, and every operand an operator
    names is defined before; raises ValueError naming the case."""
    graph = case["graph"]
    tensors = {**graph["inputs"], **graph["expectedOutputs"]}
    for name, spec in tensors.items():
        data, shape = spec["data"], spec["descriptor"]["shape"]
        if isinstance(data, list) and len(data) != _count(shape):
            raise ValueError(f"{where}: {case['name']!r}: {name} has {len(data)} values for "
                             f"shape {shape}")
    defined = set(graph["inputs"])
    for op in graph["operators"]:
        outs = op["outputs"]
        defined.update([outs] if isinstance(outs, str) else outs)
    missing = set(graph["expectedOutputs"]) - defined
    if missing:
        raise ValueError(f"{where}: {case['name']!r}: outputs {sorted(missing)} not computed")


def _run_sandbox(source: Path, utils: Path, shapes: Path | None) -> list[dict[str, Any]]:
    argv = ["node", "-", str(source), str(utils)] + ([str(shapes)] if shapes else [])
    proc = subprocess.run(argv, input=SANDBOX_JS, text=True, capture_output=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["node failed"])[-1]
        raise ValueError(f"{source}: the vm sandbox failed: {last}")
    cases: list[dict[str, Any]] = json.loads(proc.stdout)
    return cases


class _Recorder(MLGraphBuilder):
    """A builder that keeps every operator's outputs, in order."""

    def __init__(self) -> None:
        super().__init__(ML().create_context())
        self.results: list[list[Any]] = []

    def apply(self, op: str, args: Sequence[Any], options: Mapping[str, Any]) -> list[Any]:
        out = super().apply(op, args, options)
        self.results.append(out)
        return out


def intermediate_shapes(case: dict[str, Any]) -> dict[str, dict[str, list[int]]]:
    """`{operand: {"shape": [...]}}` of every operator output of a case, as WPT's harness hands
    its tolerance functions (`intermediateOperands`): the shapes the spec's builder steps give."""
    builder = _Recorder()
    case_graph(case, builder)
    shapes: dict[str, dict[str, list[int]]] = {}
    for op, outs in zip(case["graph"]["operators"], builder.results, strict=True):
        names = [op["outputs"]] if isinstance(op["outputs"], str) else op["outputs"]
        for name, operand in zip(names, outs, strict=True):
            shapes[name] = {"shape": list(operand.shape)}
    return shapes


def extract(source: Path, utils: Path) -> list[dict[str, Any]]:
    """The cases of one `.https.any.js` file, tolerances computed by the file's function (with
    the tolerance helpers of WPT's `resources/utils.js`, `utils`, loaded first). A tolerance
    function that needs the shape of an operator's output gets it from our builder (a second
    sandbox run); if the case does not build here, its tolerance stays null."""
    cases = _run_sandbox(source, utils, None)
    retry: dict[str, Any] = {}
    for i, case in enumerate(cases):
        if case.get("tolerance_error"):
            with contextlib.suppress(Exception):  # a case our builder rejects keeps null
                retry[str(i)] = intermediate_shapes(case)
    if retry:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(retry, f)
        try:
            again = _run_sandbox(source, utils, Path(f.name))
        finally:
            os.unlink(f.name)
        for key in retry:
            cases[int(key)] = again[int(key)]
    for case in cases:
        check_case(case, source.name)
    return cases


def _merge(path: Path, entry: dict[str, Any], cases: list[dict[str, Any]],
           provenance: dict[str, str]) -> None:
    """`--merge`: replace the cases of `path` named like `cases` (an excerpt's), in place;
    the file's and its INDEX entry's provenance gain a `replaced` record."""
    doc = json.loads(path.read_text())
    names = [c["name"] for c in doc["cases"]]
    new = {c["name"]: c for c in cases}
    unknown = [n for n in new if names.count(n) != 1]
    if unknown:
        raise SystemExit(f"{path.name}: no single case named {unknown}")
    doc["cases"] = [new.get(c["name"], c) for c in doc["cases"]]
    replaced = {**provenance, "cases": [names.index(n) for n in new]}
    doc["provenance"]["replaced"] = entry["provenance"]["replaced"] = replaced
    compact = functools.partial(json.dumps, separators=(",", ":"))
    head = [f"  {json.dumps(k)}: {compact(v)}," for k, v in doc.items() if k != "cases"]
    body = ",\n".join(f"    {compact(c)}" for c in doc["cases"])
    path.write_text("{\n" + "\n".join(head) + f'\n  "cases": [\n{body}\n  ]\n}}\n')
    entry["tolerance_null"] = sum(c["tolerance"] is None for c in doc["cases"])
    if "lossy_nonfinite_cases" in entry:
        entry["lossy_nonfinite_cases"] = sum(bool(c.get("lossy_nonfinite")) for c in doc["cases"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--prefix", required=True, help="folder of the sources in --repo")
    parser.add_argument("--note", default="", help="how the sources were obtained")
    parser.add_argument("--utils", type=Path, required=True,
                        help="the tolerance functions of WPT webnn/resources/utils.js")
    parser.add_argument("--merge", action="store_true",
                        help="each source is an excerpt of a file already in --out: its cases "
                             "replace the cases of the same name there, the others stay")
    args = parser.parse_args(argv)
    index_path = args.out / "INDEX.json"
    index = json.loads(index_path.read_text())
    for source in args.sources:
        stem = source.name.removesuffix(".https.any.js")
        cases = extract(source, args.utils)
        if not cases:
            print(f"{source.name}: no webnn_conformance_test cases", file=sys.stderr)
            continue
        provenance = {"repo": args.repo, "commit": args.commit,
                      "path": f"{args.prefix}/{source.name}",
                      "method": "tools/wpt_extract.py (node vm sandbox)"}
        if args.note:
            provenance["note"] = args.note
        if args.merge:
            _merge(args.out / f"{stem}.json", index["ops"][stem], cases, provenance)
            print(f"{stem}: {len(cases)} cases replaced")
            continue
        doc = {"source_file": f"webnn/conformance_tests/{source.name}",
               "provenance": provenance, "cases": cases}
        (args.out / f"{stem}.json").write_text(json.dumps(doc, indent=None) + "\n")
        index["ops"][stem] = {
            "source": "js", "source_file": doc["source_file"], "cases": len(cases),
            "operators": sorted({op["name"] for c in cases for op in c["graph"]["operators"]}),
            "tolerance_null": sum(c["tolerance"] is None for c in cases),
            "partial": False, "provenance": provenance}
        for key in ("missing_op_files", "partial_op_files"):
            if stem in index.get(key, []):
                index[key].remove(stem)
        print(f"{stem}: {len(cases)} cases")
    ops = index["ops"]
    index["totals"].update({"op_files": len(ops),
                            "cases": sum(v["cases"] for v in ops.values()),
                            "from_js": sum(v["source"] == "js" for v in ops.values()),
                            "missing": len(index.get("missing_op_files", [])),
                            "partial": len(index.get("partial_op_files", []))})
    index["updated"] = {"by": "tools/wpt_extract.py",
                        "at": datetime.now(UTC).isoformat(timespec="seconds")}
    index_path.write_text(json.dumps(index, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
