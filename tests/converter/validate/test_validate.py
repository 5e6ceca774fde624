"""converter.validate: input generation rules, comparison metrics, validate() against
onnxruntime and LiteRT, and the first-diverging-node search with deliberately broken
mappings (ONNX and TFLite)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from converter import convert as convert_model
from converter.core.errors import InvalidModel
from converter.validate import (
    compare,
    convert_tapped,
    detect_format,
    make_inputs,
    run_source,
    validate,
)
from tests.cli.models import embedding_onnx, tiny_cnn, tiny_tflite


@pytest.fixture(scope="module")
def cnn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cnn(tmp_path_factory.mktemp("v") / "tiny.onnx")


@pytest.fixture(scope="module")
def tfl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("v") / "tiny.tflite"
    tiny_tflite(path)
    return path


def test_detect_format(cnn: Path, tfl: Path, tmp_path: Path) -> None:
    assert detect_format(cnn) == "onnx"
    assert detect_format(tfl) == "tflite"
    renamed = tmp_path / "model.bin"
    renamed.write_bytes(tfl.read_bytes())
    assert detect_format(renamed) == "tflite"  # by the TFL3 identifier, not the suffix
    assert detect_format(tfl.read_bytes()) == "tflite"
    with pytest.raises(InvalidModel, match="does not exist"):
        detect_format(tmp_path / "nope.onnx")


def test_convert_model_option_checks(cnn: Path, tfl: Path) -> None:
    with pytest.raises(InvalidModel, match="no named free dimensions"):
        convert_model(tfl, free_dims={"batch": 1})
    with pytest.raises(InvalidModel, match="only supported for ONNX"):
        convert_model(tfl, pin_inputs={"x": 1})
    with pytest.raises(InvalidModel, match="TFLite models only"):
        convert_model(cnn, free_dims={"batch": 1}, signature="serving_default")


def test_input_rules(tmp_path: Path) -> None:
    path = embedding_onnx(tmp_path / "emb.onnx", vocab=5)
    source = convert_model(path).source
    a = make_inputs(source, seed=7)
    b = make_inputs(source, seed=7)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])  # reproducible
    assert a["ids"].dtype == np.int64 and 0 <= a["ids"].min() and a["ids"].max() < 5
    np.testing.assert_array_equal(a["attention_mask"], np.ones((2, 6), np.float32))
    assert 0.0 <= a["image"].min() and a["image"].max() <= 1.0  # image-like: [0, 1]
    assert a["x"].min() < 0 and a["x"].max() <= 1.0  # other floats: [-1, 1]
    c = make_inputs(source, seed=8)
    assert not np.array_equal(a["x"], c["x"])
    over = make_inputs(source, seed=7, overrides={"x": np.full((2, 3), 9.0)})
    np.testing.assert_array_equal(over["x"], np.full((2, 3), 9.0, np.float32))
    np.testing.assert_array_equal(over["ids"], a["ids"])  # others unchanged
    with pytest.raises(InvalidModel, match="not graph inputs"):
        make_inputs(source, overrides={"nope": np.zeros(1)})
    with pytest.raises(InvalidModel, match="shape"):
        make_inputs(source, overrides={"x": np.zeros((3, 2))})


def test_compare_metrics() -> None:
    ref = np.array([1.0, -2.0, 4.0], np.float32)
    c = compare("y", ref + np.float32(0.004), ref, rtol=2e-3, atol=0.0)
    assert math.isclose(c.max_abs, 0.004, rel_tol=1e-3)
    assert math.isclose(c.max_rel, 0.001, rel_tol=1e-3)
    assert math.isclose(c.bound, 0.008) and c.passed  # tolerance scaled by max|ref| = 4
    assert c.cosine > 0.9999
    assert not compare("y", ref + np.float32(0.004), ref, rtol=5e-4, atol=0.0).passed
    assert compare("y", ref + np.float32(0.004), ref, rtol=0.0, atol=0.005).passed
    nan = np.array([np.nan, 1.0])
    assert compare("n", nan, nan, rtol=0, atol=0).passed
    assert not compare("n", np.array([np.nan, 1.0]), np.array([0.0, 1.0]), rtol=1,
                       atol=1).passed
    assert not compare("s", np.zeros((2, 3)), np.zeros((3, 2)), rtol=1, atol=1).passed
    assert not compare("i", np.array([1, 2]), np.array([1, 3]), rtol=1, atol=1).passed
    assert compare("q", np.array([1, 4], np.int8), np.array([1, 3], np.int8), rtol=0, atol=0,
                   steps=2).passed
    z = compare("z", np.zeros(3), np.zeros(3), rtol=0, atol=0)
    assert z.passed and z.cosine == 1.0 and z.max_rel == 0.0
    d = compare("d", np.array([0.0, -1.0]), np.array([0.0, 1.0]), rtol=0, atol=0)
    assert d.cosine == pytest.approx(-1.0) and d.to_dict()["passed"] is False


def test_validate_onnx_passes(cnn: Path) -> None:
    report = validate(cnn, free_dims={"batch": 2}, seed=3)
    assert report.passed and report.divergence is None
    assert report.outputs[0].name == "probs" and report.outputs[0].shape == (2, 10)
    assert report.max_abs < 1e-5
    d = report.to_dict()
    assert d["verdict"] == "pass" and d["conversion"]["native"] == 9


def test_validate_tflite_passes(tfl: Path) -> None:
    report = validate(tfl)
    assert report.passed and report.format == "tflite"


def _patch(monkeypatch: pytest.MonkeyPatch, registry: object, key: tuple[str, str],
           fn: object) -> None:
    registry.load_all()  # type: ignore[attr-defined]
    handlers = registry._REGISTRY[key]  # type: ignore[attr-defined]
    monkeypatch.setitem(registry._REGISTRY, key,  # type: ignore[attr-defined]
                        [dataclasses.replace(h, fn=fn) for h in handlers])


def test_first_diverging_node_onnx(cnn: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import op_mappings.onnx as registry

    _patch(monkeypatch, registry, ("", "Relu"),
           lambda ctx, node: [ctx.builder.sigmoid(ctx.operand(node.inputs[0]))])
    report = validate(cnn, free_dims={"batch": 1})
    assert not report.passed
    div = report.divergence
    assert div is not None
    assert (div.node_name, div.op_type, div.output, div.index) == ("relu1", "Relu", "r1", 1)
    assert div.comparison.max_abs > div.comparison.bound
    assert "first diverging node: Relu 'relu1'" in report.to_text()
    assert report.to_dict()["divergence"]["node"] == "relu1"


def test_first_diverging_node_tflite(tfl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import op_mappings.tflite as registry

    _patch(monkeypatch, registry, ("", "TANH"),
           lambda ctx, node: [ctx.builder.sigmoid(ctx.operand(node.inputs[0]))])
    report = validate(tfl)
    assert not report.passed
    assert report.divergence is not None
    assert (report.divergence.op_type, report.divergence.node_name) == ("TANH", "act")


def test_taps_and_intermediates_agree(cnn: Path) -> None:
    result = convert_model(cnn, free_dims={"batch": 1})
    tapped = convert_tapped(result.source)
    assert {"c1", "r1", "p1", "flat", "logits", "probs"} <= set(tapped.outputs)
    feeds = make_inputs(result.source)
    run = run_source("onnx", cnn, result.source, feeds, intermediates=True)
    assert list(run.intermediates)[:3] == ["c1", "r1", "p1"]
    np.testing.assert_array_equal(run.outputs["probs"], run.intermediates["probs"])


def test_locate_reports_output_only_difference(cnn: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # a tolerance nothing can meet: every value diverges, so the first node is named
    report = validate(cnn, free_dims={"batch": 1}, rtol=0.0, atol=-1.0)
    assert not report.passed and report.divergence is not None
    assert report.divergence.index == 0
