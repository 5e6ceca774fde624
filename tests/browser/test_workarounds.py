"""The chromium-tflite rewrite rules in the real browser: each small graph of
tests/converter/passes/targets/cases.py (independent float64 / exact expected values) fails in
Chromium as converted (a wrong result, or a build error) and passes once rewritten for the
target. Every graph, as converted and rewritten, runs in one browser session. When Chromium
stops deviating on a case, the first test says so: the rule may then go."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML
from converter.passes.targets import load_target
from converter.passes.targets.passes import lower
from tests.converter.passes.targets.cases import CASES, RuleCase

pytestmark = pytest.mark.browser


def _matches(case: RuleCase, outputs: dict[str, np.ndarray] | None) -> str:
    """'' when `outputs` match the case's expected values, else what differs."""
    if outputs is None:
        return "no outputs"
    rtol, atol = case.tolerance
    for name, want in case.expected.items():
        got = outputs[name].reshape(want.shape)
        if got.dtype.kind == "f":
            g = got.astype(np.float64)
            same = (g == want) | (np.isnan(g) & np.isnan(want))  # infinities, NaN
            with np.errstate(invalid="ignore"):
                err = np.where(same, 0.0, np.abs(g - want))
                bound = atol + rtol * np.abs(np.where(same, 0.0, want))
            if not (err <= bound).all():
                return f"{name}: max abs error {float(err.max()):.3g}"
        elif got.dtype != want.dtype or not np.array_equal(got, want):
            return f"{name}: {got.ravel()[:6].tolist()} != {want.ravel()[:6].tolist()}"
    return ""


@pytest.fixture(scope="module")
def runs(browser: Any) -> dict[str, tuple[Any, Any, Any]]:
    from converter.validate.browser import run_graphs

    ctx = ML().create_context()
    target = load_target("chromium-tflite")
    items, lowered = [], {}
    for case in CASES:
        graph = case.graph(ctx)
        lowered[case.name] = lower(graph, target)
        items += [(graph, case.feeds), (lowered[case.name].graph, case.feeds)]
    results = run_graphs(items, page=False, setup=browser)
    return {case.name: (results[2 * i], results[2 * i + 1], lowered[case.name])
            for i, case in enumerate(CASES)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_chromium_deviates_without_the_rule(runs: dict[str, Any], case: RuleCase) -> None:
    raw, _, _ = runs[case.name]
    if case.browser == "wrong":
        assert raw.outputs is not None, raw.error
        assert _matches(case, raw.outputs), (
            f"{raw.browser} now gets {case.name!r} right: rules {case.rules} may go")
    else:
        assert raw.outputs is None, (
            f"{raw.browser} now builds {case.name!r}: rules {case.rules} may go "
            f"({_matches(case, raw.outputs) or 'right result'})")
        assert raw.error.startswith("build:"), raw.error


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rewritten_graph_is_right_in_the_browser(runs: dict[str, Any], case: RuleCase) -> None:
    _, fixed, lowered = runs[case.name]
    assert set(case.rules) <= set(lowered.applied), lowered.applied
    assert fixed.outputs is not None, (fixed.error, fixed.problems, lowered.notes)
    assert not fixed.problems, fixed.problems
    bad = _matches(case, fixed.outputs)
    assert not bad, f"{fixed.browser}: {bad} (rewritten: {lowered.notes})"


def test_validate_cli_with_target_in_the_browser(browser: Any, tmp_path: Any) -> None:
    """`webnn-convert validate MODEL --browser --target chromium-tflite`: a model whose
    AveragePool has asymmetric padding fails in the browser as converted for `spec` (the
    unrestricted graph) and passes with the target, the rewrite named in the notes."""
    import json

    import onnx
    from click.testing import CliRunner
    from onnx import TensorProto, helper

    from cli.main import cli

    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                            pads=[1, 0, 0, 1], count_include_pad=0)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             [1, 2, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    path = tmp_path / "pool.onnx"
    onnx.save(model, path)
    plain = CliRunner().invoke(cli, ["validate", str(path), "--browser", "--json",
                                     "--target", "spec"])
    assert plain.exit_code == 1, plain.output
    assert json.loads(plain.stdout)["browser"]["status"] == "fail"
    r = CliRunner().invoke(cli, ["validate", str(path), "--browser", "--json", "--target",
                                 "chromium-tflite"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["verdict"] == "pass" and data["browser"]["status"] == "pass"
    assert any("rule pool-padding" in n for n in data["notes"]), data["notes"]
