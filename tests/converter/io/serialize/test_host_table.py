"""`<stem>.host.json` (converter/io/serialize/host_table.py) and `load_model`: an export of a
model with host steps loads back as the whole pipeline and matches onnxruntime on the
original; a malformed or hostile host file is one `WebnnFormatError` line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

import converter
from converter.core.errors import PathOutsideFolder
from converter.io.serialize.errors import WebnnFormatError
from tests.converter.conversion.host_models import MODELS, make_detection


def _onnxruntime(model: Any, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, inputs), strict=True))


@pytest.mark.parametrize("fmt", ["webnn", "webnn-json", "js", "all"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_export_and_load_model_round_trip(name: str, fmt: str, tmp_path: Path) -> None:
    model, inputs = MODELS[name](0)
    result = converter.convert(model)
    written = converter.export(result, tmp_path / "out", format=fmt, stem="m")
    assert tmp_path / "out" / "m.host.json" in written
    loaded = converter.load_model(tmp_path / "out")
    assert loaded.host is not None
    assert loaded.output_names == result.output_names
    assert loaded.input_names == result.input_names
    want = _onnxruntime(model, inputs)
    for backend in ("reference", "onnxruntime"):
        got = loaded.run(inputs, backend)
        assert list(got) == list(want)
        for key, value in want.items():
            assert got[key].dtype == value.dtype and got[key].shape == value.shape, key
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6)
    assert isinstance(converter.load(tmp_path / "out"), type(result.graph))  # still a graph


def test_onnx_format_warns_that_host_steps_are_left_out(tmp_path: Path) -> None:
    result = converter.convert(make_detection()[0])
    with pytest.warns(UserWarning, match="host steps"):
        written = converter.export(result, tmp_path / "out", format="onnx", stem="m")
    assert not any(p.name.endswith(".host.json") for p in written)


@pytest.fixture()
def exported(tmp_path: Path) -> Path:
    result = converter.convert(make_detection()[0])
    converter.export(result, tmp_path / "out", stem="m")
    return tmp_path / "out"


def _edit(folder: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    path = folder / "m.host.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _first_constant(d: dict[str, Any]) -> dict[str, Any]:
    return next(iter(d["constants"].values()))  # type: ignore[no-any-return]


HOSTILE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "traversal input name": lambda d: d["nodes"][0].update(inputs=["../../etc/passwd"]),
    "traversal output name": lambda d: d["modelOutputs"].append(
        {"name": "../../x", "dataType": "float32"}),
    "graph input that is no graph output": lambda d: d["inputs"].append(
        {"name": "/nowhere", "source": "graph"}),
    "huge shape": lambda d: _first_constant(d).update(shape=[1 << 31, 1 << 31]),
    "bad base64": lambda d: _first_constant(d).update(base64="@@@@" * 2),
    "unknown op": lambda d: d["nodes"][-1].update(op="TotallyNewOp"),
    "no modelOutputs": lambda d: d.pop("modelOutputs"),
    "bad dataType": lambda d: d["modelInputs"][0].update(dataType="object"),
    "not an object": lambda d: d.clear(),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_host_file_is_one_line(exported: Path, case: str) -> None:
    _edit(exported, HOSTILE[case])
    with pytest.raises(WebnnFormatError) as info:
        converter.load_model(exported)
    text = str(info.value)
    assert "\n" not in text and "m.host.json" in text and len(text) < 600


def test_a_host_file_that_is_not_json_is_one_line(exported: Path) -> None:
    (exported / "m.host.json").write_bytes(b"\xff{not json")
    with pytest.raises(WebnnFormatError, match="invalid JSON"):
        converter.load_model(exported)


def test_a_host_file_symlinked_outside_is_refused(exported: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.host.json"
    (exported / "m.host.json").rename(outside)
    (exported / "m.host.json").symlink_to(outside)
    with pytest.raises(PathOutsideFolder, match="outside the model's folder"):
        converter.load_model(exported)
    assert converter.load_model(exported, allow_roots=[tmp_path]).host is not None
