"""Count the official ONNX node tests by eligibility and result.

```bash
.venv/bin/python tests/conformance/count_node_tests.py            # summary
.venv/bin/python tests/conformance/count_node_tests.py --json results.json -k conv
.venv/bin/python tests/conformance/count_node_tests.py --write-exclusions \\
    tests/conformance/onnx_node_exclusions.toml                   # regenerate the data file
```

Every node test of the installed `onnx` (plain and `_expanded`) is classified:

- ineligible by category (decided from the model, without running it): `sequence`
  (sequence/map I/O), `optional` (optional I/O), `string` (string I/O), `unsupported-dtype`
  (float64, bfloat16, float8, int4, int16, complex, ... I/O), `random` (random ops,
  training-mode dropout), `training` (ai.onnx.preview.training), `data-dependent-shape`
  (ops whose output shape depends on input values: NonZero, Unique, Compress,
  NonMaxSuppression, ...);
- `specialised`: converts only after pinning graph inputs that decide shapes (Reshape shape
  given as a graph input, ...); run with `converter.conversion.onnx_backend`'s specialisation and counted
  apart (they are data-dependent shapes in the strict sense);
- eligible: everything else; run through `WebNNBackend` on the reference backend and compared
  exactly as `onnx.backend.test` does (`Runner.assert_similar_outputs`, the case's rtol/atol
  unless the exclusion file's `[tolerances]` overrides them).

Failures are grouped by reason: `not-yet-mapped` (unsupported_op), another conversion
reason code, `mismatch` (wrong values/dtype/shape), `error: <exception type>`, `timeout`.
With `--write-exclusions`, ineligible and failing tests are written to the TOML exclusion file
(categories from the classification; failing tests keep a hand-written `known-difference`
entry when the old file had one).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import onnx

HERE = Path(__file__).resolve().parent
EXCLUSIONS = HERE / "onnx_node_exclusions.toml"
TIMEOUT_S = 60

UNSUPPORTED_DTYPES = {
    onnx.TensorProto.DOUBLE: "float64", onnx.TensorProto.BFLOAT16: "bfloat16",
    onnx.TensorProto.INT16: "int16", onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.COMPLEX64: "complex", onnx.TensorProto.COMPLEX128: "complex",
}
RANDOM_OPS = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
              "Bernoulli", "Multinomial"}
DATA_DEPENDENT_OPS = {"NonZero", "Unique", "Compress", "NonMaxSuppression", "StringSplit",
                      "RegexFullMatch", "StringConcat", "StringNormalizer", "TfIdfVectorizer",
                      "ImageDecoder"}

CATEGORIES = ("sequence", "optional", "string", "unsupported-dtype", "random", "training",
              "data-dependent-shape", "empty-tensor")
RUN_ANYWAY = ("empty-tensor",)
"""Categories that are not eligible but still run (their passes are reported apart)."""


def _dtype_label(elem: int) -> str | None:
    if elem in UNSUPPORTED_DTYPES:
        return UNSUPPORTED_DTYPES[elem]
    name = onnx.TensorProto.DataType.Name(elem).lower()
    for prefix in ("float8", "float4", "int4", "uint4", "int2", "uint2"):
        if name.startswith(prefix):
            return name
    return None


def _all_nodes(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    out = []
    for node in graph.node:
        out.append(node)
        for attr in node.attribute:
            graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            for g in graphs:
                out.extend(_all_nodes(g))
    return out


def classify(name: str, model: onnx.ModelProto) -> tuple[str | None, str]:
    """(category, detail) for an ineligible test, (None, "") for an eligible one."""
    ios = list(model.graph.input) + list(model.graph.output)
    for vi in ios:
        kind = vi.type.WhichOneof("value")
        if kind in ("sequence_type", "map_type"):
            return "sequence", f"{vi.name}: {kind}"
        if kind in ("optional_type", "sparse_tensor_type"):
            return "optional", f"{vi.name}: {kind}"
    for vi in ios:
        elem = vi.type.tensor_type.elem_type
        if elem == onnx.TensorProto.STRING:
            return "string", f"{vi.name}: string"
    for vi in ios:
        label = _dtype_label(vi.type.tensor_type.elem_type)
        if label:
            return "unsupported-dtype", f"{vi.name}: {label}"
    nodes = _all_nodes(model.graph)
    if any(n.domain == "ai.onnx.preview.training" for n in nodes):
        return "training", "ai.onnx.preview.training"
    ops = {n.op_type for n in nodes}
    if ops & RANDOM_OPS or "training_dropout" in name:
        return "random", ", ".join(sorted(ops & RANDOM_OPS)) or "training-mode Dropout"
    if ops & DATA_DEPENDENT_OPS:
        return "data-dependent-shape", ", ".join(sorted(ops & DATA_DEPENDENT_OPS))
    for n in nodes:  # any sequence op or string constant inside
        if n.op_type.startswith(("Sequence", "Optional")) or n.op_type in ("ConcatFromSequence",
                                                                             "SplitToSequence"):
            return "sequence", n.op_type
    for vi in ios:
        dims = vi.type.tensor_type.shape.dim
        if any(d.HasField("dim_value") and d.dim_value == 0 for d in dims):
            return "empty-tensor", f"{vi.name}: zero-size (WebNN operands have no empty shapes)"
    return None, ""


def _as_array(value: Any) -> Any:
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    return value


_CASES: list[Any] = []


def _timeout(signum: int, frame: Any) -> None:
    raise TimeoutError(f"more than {TIMEOUT_S} s")


def run_case(args: tuple[int, float, float]) -> dict[str, Any]:
    """Run one eligible test (index into the collected cases); returns {"name", "status",
    "reason", "message", "seconds", "specialised"}."""
    from onnx.backend.test.runner import Runner

    from converter.conversion.onnx_backend import WebNNBackend
    from converter.core.errors import ConversionError, ConversionFailed

    index, rtol, atol = args
    case = _CASES[index]
    name = case.name
    start = time.perf_counter()
    out: dict[str, Any] = {"name": name, "specialised": False}
    signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(TIMEOUT_S)
    try:
        rep = WebNNBackend.prepare(case.model, "CPU")
        out["specialised"] = rep.result is None
        for inputs, expected in case.data_sets:
            got = rep.run([_as_array(v) for v in inputs])
            Runner.assert_similar_outputs([_as_array(v) for v in expected], list(got),
                                          rtol=rtol, atol=atol)
        out.update(status="passed", reason="", message="")
    except ConversionFailed as exc:
        codes = Counter(e.reason_code for e in exc.errors)
        code = codes.most_common(1)[0][0]
        out.update(status="failed", reason="not-yet-mapped" if code == "unsupported_op"
                   else code, message=str(exc).splitlines()[1].strip()[:300]
                   if len(str(exc).splitlines()) > 1 else str(exc)[:300])
    except ConversionError as exc:
        out.update(status="failed", reason=exc.reason_code, message=str(exc)[:300])
    except AssertionError as exc:
        out.update(status="failed", reason="mismatch", message=" ".join(str(exc).split())[:300])
    except TimeoutError as exc:
        out.update(status="failed", reason="timeout", message=str(exc))
    except Exception as exc:  # noqa: BLE001 - report every failure
        out.update(status="failed", reason=f"error: {type(exc).__name__}",
                   message=str(exc)[:300])
    finally:
        signal.alarm(0)
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


def load_exclusions(path: Path = EXCLUSIONS) -> dict[str, Any]:
    if not path.is_file():
        return {"exclude": {}, "tolerances": {}}
    return tomllib.loads(path.read_text())


def excluded_names(cfg: dict[str, Any]) -> dict[str, str]:
    """{test name: category} from the exclusion file."""
    out: dict[str, str] = {}
    for category, entry in cfg.get("exclude", {}).items():
        for name in entry.get("tests", []):
            out[name] = category
    return out


def collect(pattern: str = "") -> list[Any]:
    """The node test cases (in memory, as `onnx.backend.test` runs them), sorted by name."""
    import warnings

    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in load_model_tests(kind="node") if pattern in c.name]
    return sorted(cases, key=lambda c: c.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only tests whose name contains this")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="write per-test results to this file")
    parser.add_argument("--write-exclusions", metavar="TOML",
                        help="rewrite the exclusion file from the results")
    parser.add_argument("--failures", action="store_true", help="print every failure")
    opts = parser.parse_args(argv)

    cfg = load_exclusions()
    tolerances = cfg.get("tolerances", {})
    cases = collect(opts.k)
    _CASES[:] = cases
    static: dict[str, tuple[str, str]] = {}
    todo = []
    for index, case in enumerate(cases):
        category, detail = classify(case.name, case.model)
        if category:
            static[case.name] = (category, detail)
            if category not in RUN_ANYWAY:
                continue
        tol = tolerances.get(case.name, {})
        todo.append((index, float(tol.get("rtol", case.rtol)),
                     float(tol.get("atol", case.atol))))
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(opts.jobs, maxtasksperchild=50) as pool:
        results = list(pool.imap_unordered(run_case, todo, chunksize=4))
    elapsed = time.perf_counter() - start
    results.sort(key=lambda r: r["name"])

    plain = [c for c in cases if not c.name.endswith("_expanded")]
    anyway = [r for r in results if r["name"] in static]
    results_el = [r for r in results if r["name"] not in static]
    spec = [r for r in results_el if r["specialised"]]
    eligible = [r for r in results_el if not r["specialised"]]
    passed = [r for r in eligible if r["status"] == "passed"]
    failed = Counter(r["reason"] for r in eligible if r["status"] != "passed")
    print(f"node tests: {len(cases)} ({len(plain)} plain, {len(cases) - len(plain)} expanded)")
    print("not eligible, by category:")
    for cat, n in sorted(Counter(c for c, _ in static.values()).items()):
        dtypes = Counter(d.split(": ")[-1] for c, d in static.values() if c == cat)
        extra = f"  ({', '.join(f'{k} {v}' for k, v in dtypes.most_common())})" \
            if cat == "unsupported-dtype" else ""
        ran = [r for r in anyway if static[r["name"]][0] == cat]
        if ran:
            extra = f"  (run anyway: {sum(r['status'] == 'passed' for r in ran)} pass)"
        print(f"  {cat}: {n}{extra}")
    sp_pass = sum(r["status"] == "passed" for r in spec)
    print(f"specialised (shape-deciding graph inputs pinned; data-dependent shapes, counted "
          f"apart): {len(spec)}, passed {sp_pass}")
    rate = 100.0 * len(passed) / max(len(eligible), 1)
    print(f"eligible: {len(eligible)}")
    print(f"passed: {len(passed)} ({rate:.1f}%)")
    print(f"failed: {sum(failed.values())}")
    for reason, n in failed.most_common():
        print(f"  {reason}: {n}")
    spec_failed = Counter(r["reason"] for r in spec if r["status"] != "passed")
    if spec_failed:
        print("specialised failures: " + ", ".join(f"{k} {v}" for k, v in
                                                    spec_failed.most_common()))
    print(f"run time: {elapsed:.1f} s on {opts.jobs} process(es); slowest: " + ", ".join(
        f"{r['name']} {r['seconds']}s" for r in sorted(results, key=lambda r: -r["seconds"])[:5]))
    if opts.failures:
        for r in results:
            if r["status"] != "passed":
                print(f"FAIL {r['name']}{' [specialised]' if r['specialised'] else ''}: "
                      f"{r['reason']}: {r['message']}")
    if opts.json:
        Path(opts.json).write_text(json.dumps({"static": static, "results": results},
                                              indent=1))
    if opts.write_exclusions:
        write_exclusions(Path(opts.write_exclusions), cfg, static, results)
    return 0


NOTES = {
    "sequence": "sequence or map inputs/outputs/ops: WebNN has tensors only",
    "optional": "optional-typed inputs/outputs: WebNN has tensors only",
    "string": "string tensors: no WebNN data type",
    "unsupported-dtype": ("I/O in a type WebNN cannot carry (float64, bfloat16, float8, "
                          "float4, int4, int2, int16, uint16, complex)"),
    "random": "random number generation (results not reproducible against stored outputs)",
    "training": "training ops (ai.onnx.preview.training)",
    "data-dependent-shape": "output shape depends on input values (WebNN shapes are static)",
    "empty-tensor": ("an input or output has a zero-size dimension; WebNN operands cannot be "
                     "empty (listed only when the test fails)"),
    "not-yet-mapped": "no handler yet (unsupported_op)",
    "unsupported-variant": ("the op is mapped, but not this attribute value / dtype / "
                            "input form (see notes: the converter's error)"),
    "known-difference": ("mapped, but the result differs from the ONNX reference beyond the "
                         "test's tolerance (see notes)"),
}


def write_exclusions(path: Path, old: dict[str, Any], static: dict[str, tuple[str, str]],
                     results: list[dict[str, Any]]) -> None:
    """Write the exclusion TOML: one table per category with its test names (sorted)."""
    groups: dict[str, list[str]] = {}
    notes: dict[str, str] = {}
    old_notes = {k: v.get("notes", {}) for k, v in old.get("exclude", {}).items()}
    for name, (cat, _detail) in static.items():
        if cat not in RUN_ANYWAY:
            groups.setdefault(cat, []).append(name)
    for r in results:
        if r["status"] == "passed":
            continue
        if r["name"] in static:
            groups.setdefault(static[r["name"]][0], []).append(r["name"])
            continue
        if r["reason"] == "not-yet-mapped":
            cat = "not-yet-mapped"
        elif r["reason"] in ("mismatch", "timeout") or r["reason"].startswith("error"):
            cat = "known-difference"
        else:
            cat = "unsupported-variant"
        groups.setdefault(cat, []).append(r["name"])
        if cat != "not-yet-mapped":
            old_note = old_notes.get(cat, {}).get(r["name"])
            notes[r["name"]] = old_note or " ".join(
                f"{r['reason']}: {r['message'].removeprefix('- ')}".split())[:240]
    lines = ["# ONNX backend node tests excluded from tests/conformance/test_onnx_node_suite.py.",
             "# One table per reason category; `tests` are node-test names without the",
             "# _cpu/_cuda suffix. Regenerate with tests/conformance/count_node_tests.py",
             "# --write-exclusions (keeps `notes`); delete names as tests start passing.", ""]
    for cat in [*CATEGORIES, "not-yet-mapped", "unsupported-variant", "known-difference"]:
        names = sorted(set(groups.get(cat, [])))
        if not names:
            continue
        lines.append(f'[exclude.{cat}]')
        lines.append(f'reason = {json.dumps(NOTES[cat])}')
        lines.append("tests = [")
        lines += [f'  "{n}",' for n in names]
        lines.append("]")
        if cat in ("unsupported-variant", "known-difference"):
            lines.append(f"[exclude.{cat}.notes]")
            lines += [f"{n} = {json.dumps(notes[n])}" for n in names if n in notes]
        lines.append("")
    tol = old.get("tolerances", {})
    if tol:
        lines.append("# per-test tolerance overrides (rtol/atol), with the reason in `why`")
        for name, entry in sorted(tol.items()):
            lines.append(f"[tolerances.{name}]")
            lines += [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
            lines.append("")
    path.write_text("\n".join(lines).rstrip() + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1]))
    sys.exit(main())
