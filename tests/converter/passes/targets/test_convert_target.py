"""`convert(..., target=...)`, `validate(..., target=...)` and `--target` on the command line:
the graph is rewritten for the target, each rewrite named in the report, results unchanged;
an unknown target is one error before converting."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from cli.main import cli
from converter.api import InvalidModel, convert, load_target, validate


@pytest.fixture
def pool_model(tmp_path: Path) -> Path:
    """An ONNX AveragePool with asymmetric padding (Chromium counts the padded cells)."""
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                            pads=[1, 0, 0, 1], count_include_pad=0)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "pool.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def test_convert_with_target_rewrites_and_reports(pool_model: Path) -> None:
    plain = convert(pool_model, target="spec")
    chromium = convert(pool_model, target="chromium-tflite")
    assert [o.op for o in plain.graph.operations] == ["averagePool2d"]
    assert plain.report.target == "spec" and chromium.report.target == "chromium-tflite"
    assert [o.op for o in chromium.graph.operations if o.op != "transpose"] == [
        "pad", "averagePool2d", "mul"]  # in nhwc between two transposes (layout-nhwc)
    note = next(w for w in chromium.report.warnings if "rule pool-padding" in w)
    assert note.startswith("chromium-tflite: averagePool2d #0 (float32 [1x2x4x4]): padded "
                           "explicitly with zeros, the mean rescaled to the real cells (")
    assert not any("pool-padding" in w for w in plain.report.warnings)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(chromium.run({"x": x})["y"], plain.run({"x": x})["y"],
                               rtol=1e-6, atol=1e-6)
    same = convert(pool_model, target=load_target("chromium-tflite"))
    assert [o.op for o in same.graph.operations] == [o.op for o in chromium.graph.operations]


def test_validate_with_target_notes_the_rewrite(pool_model: Path) -> None:
    report = validate(pool_model, target="chromium-tflite")
    assert report.passed
    assert any("rule pool-padding" in n for n in report.notes)


def test_unknown_target_is_one_error(pool_model: Path) -> None:
    with pytest.raises(InvalidModel, match="unknown target 'safari'"):
        convert(pool_model, target="safari")
    r = CliRunner().invoke(cli, ["convert", str(pool_model), "--target", "safari"])
    assert r.exit_code == 2
    assert r.stderr.startswith("error: unknown target 'safari'")


def test_cli_convert_and_validate_take_target(pool_model: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["convert", str(pool_model), "-o", str(tmp_path / "out"),
                                 "--target", "chromium-tflite", "--json"])
    assert r.exit_code == 0, r.output
    warnings = json.loads(r.stdout)["report"]["warnings"]
    assert any("rule pool-padding" in w for w in warnings), warnings
    r = CliRunner().invoke(cli, ["validate", str(pool_model), "--target", "chromium-tflite"])
    assert r.exit_code == 0, r.output
    assert "note: chromium-tflite: averagePool2d #0" in r.stdout


def test_limits_file_target_on_the_command_line(pool_model: Path, tmp_path: Path) -> None:
    limits = tmp_path / "limits.json"
    # equal to chromium-tflite's limits.json (targets --from-browser in that browser): the
    # browser's deviations are lowered too; any other limits file: the limits-driven rules
    same = load_target("chromium-tflite").limits_dict()
    for edit, padded in ((False, True), (True, False)):
        limits.write_text(json.dumps({**same, "maxTensorByteLength": 1 << 30} if edit
                                     else same))
        r = CliRunner().invoke(cli, ["convert", str(pool_model), "-o", str(tmp_path / "out"),
                                     "--target", str(limits), "--json"])
        assert r.exit_code == 0, r.output
        warnings = json.loads(r.stdout)["report"]["warnings"]
        assert any("pool-padding" in w for w in warnings) == padded, warnings


def test_validate_failing_only_on_the_limits_says_so(pool_model: Path, tmp_path: Path
                                                     ) -> None:
    """Every output matches but the graph uses an operator the limits file lacks: validate
    fails naming the limits, not 'output(s)  outside tolerance' with no output (fuzz seed
    30, limits.remove-op)."""
    limits = tmp_path / "bare.json"
    entry = {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 8}}
    limits.write_text(json.dumps({"input": entry, "constant": entry, "output": entry}))
    r = CliRunner().invoke(cli, ["validate", str(pool_model), "--target", str(limits)])
    assert r.exit_code == 1, r.output
    assert "averagePool2d" in r.stdout and " ok" in r.stdout
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"error: {pool_model}: the converted graph uses ")
    assert "outside target bare's limits" in r.stderr
