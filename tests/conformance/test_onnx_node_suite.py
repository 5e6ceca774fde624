"""The official ONNX backend node tests through `converter.conversion.onnx_backend.WebNNBackend`.

Only `OnnxBackendNodeModelTest` is exported (the Real/Simple/PyTorch groups are left out:
the light networks are covered by tests/models/). Exclusions live in one data file,
`onnx_node_exclusions.toml`, one table per reason category; they are deselected at
collection time (not just skipped) so the run reports only tests that ran. `_cuda` copies
are deselected too (no CUDA backend is claimed). Per-test tolerance overrides come from the
file's `[tolerances]` table.

Counts by category and reason: `tests/conformance/count_node_tests.py`.
Restrictions: `WebNNBackend` specialises models whose shape-deciding inputs are graph inputs
(see its docstring); such tests run here like the others.
"""

from __future__ import annotations

import re
import tomllib
import warnings
from pathlib import Path

import onnx.backend.test

from converter.conversion.onnx_backend import WebNNBackend

_CFG = tomllib.loads(Path(__file__).with_name("onnx_node_exclusions.toml").read_text())
EXCLUDED: dict[str, str] = {name: category for category, entry in _CFG.get("exclude", {}).items()
                            for name in entry.get("tests", [])}
TOLERANCES = {name: {k: v for k, v in entry.items() if k in ("rtol", "atol")}
              for name, entry in _CFG.get("tolerances", {}).items()}

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the node-case generators warn about overflowing casts
    _suite = onnx.backend.test.BackendTest(WebNNBackend, __name__, test_kwargs=TOLERANCES)
_suite.include(r"^test_.*_cpu$")
OnnxBackendNodeModelTest = _suite.test_cases["OnnxBackendNodeModelTest"]

_NAME = re.compile(r"^(test_.+)_(cpu|cuda)$")


def _keep(test_name: str) -> bool:
    m = _NAME.match(test_name)
    return bool(m) and m.group(2) == "cpu" and m.group(1) not in EXCLUDED


# deselect instead of skipping: remove excluded tests from the class itself
for _attr in list(vars(OnnxBackendNodeModelTest)):
    if _attr.startswith("test_") and not _keep(_attr):
        delattr(OnnxBackendNodeModelTest, _attr)


def test_exclusion_file_names_real_tests() -> None:
    """Every excluded name is a node test of the installed onnx (stale entries are errors)
    and every category has a reason."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = {c.name for c in load_model_tests(kind="node")}
    stale = sorted(set(EXCLUDED) - names)
    assert not stale, f"exclusions that are not node tests: {stale[:10]}"
    for category, entry in _CFG["exclude"].items():
        assert entry.get("reason"), f"category {category} has no reason"
