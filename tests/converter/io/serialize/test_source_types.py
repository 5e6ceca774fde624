"""The exports' `sourceDataTypes` table (converter/io/serialize/source_types.py): an ONNX model
with int64 ids (an embedding gather, an int64 output) converted for a limits file without
64-bit integers, exported as `.webnn` + manifest, `.webnn.json` and `.safetensors`, loaded
back: the loaded graph still takes and gives int64 (values range-checked) and its outputs
equal onnxruntime's on the original model; `webnn-convert run` of the export does the same;
malformed tables are refused naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from cli.main import cli
from converter import convert, load
from converter.core.errors import InvalidModel
from converter.core.feeds import loaded_feeds, loaded_outputs
from converter.io.export.exporter import export
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.source_types import carries, parse_source_types
from converter.passes.precision import to_precision
from tests.converter.passes.targets.test_rules_narrow import limits_file

TABLE = np.random.default_rng(3).standard_normal((50, 4)).astype(np.float32)
IDS = np.array([[0, 49, 7], [3, 3, 12]], dtype=np.int64)


def _model(folder: Path) -> Path:
    """ids int64 [2, 3] -> emb = Gather(table, ids) float32, next = ids + 1 int64."""
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["emb"], axis=0),
         helper.make_node("Add", ["ids", "one"], ["next"])],
        "ids", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
        [helper.make_tensor_value_info("emb", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("next", TensorProto.INT64, [2, 3])],
        [numpy_helper.from_array(TABLE, "table"),
         numpy_helper.from_array(np.array(1, dtype=np.int64), "one")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = folder / "ids.onnx"
    onnx.save(model, str(path))
    return path


def _onnxruntime(model: Path, ids: np.ndarray) -> dict[str, np.ndarray]:
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return dict(zip(["emb", "next"], sess.run(["emb", "next"], {"ids": ids}), strict=True))


@pytest.fixture()
def converted(tmp_path: Path) -> tuple[Path, Any]:
    model = _model(tmp_path)
    return model, convert(str(model), target=str(limits_file(tmp_path)))


@pytest.mark.parametrize(("fmt", "weights"), [("webnn", "blob"), ("webnn-json", "blob"),
                                              ("webnn", "safetensors"),
                                              ("webnn-json", "safetensors")])
def test_loaded_export_keeps_int64_interface(tmp_path: Path, converted: tuple[Path, Any],
                                             fmt: str, weights: str) -> None:
    model, result = converted
    assert result.graph.input_descriptors["ids"].data_type == "int32"  # narrowed
    export(result, tmp_path / "out", format=fmt, stem="ids", weights=weights)
    g = load(tmp_path / "out")
    assert g.input_descriptors["ids"].data_type == "int32"
    assert g.narrowed_inputs == {"ids": "int64"}
    assert g.narrowed_outputs == {"next": "int64"}
    feeds = loaded_feeds(g, {"ids": IDS})
    assert feeds["ids"].dtype == np.int32
    got = loaded_outputs(g, g.context.compute(g, feeds))
    want = _onnxruntime(model, IDS)
    assert got["next"].dtype == np.int64
    np.testing.assert_array_equal(got["next"], want["next"])
    np.testing.assert_allclose(got["emb"], want["emb"], rtol=0, atol=0)
    with pytest.raises(InvalidModel, match=r"input 'ids': value 4294967296 does not fit int32"):
        loaded_feeds(g, {"ids": np.full((2, 3), 2**32, dtype=np.int64)})


def test_float16_keeps_the_int64_interface(converted: tuple[Path, Any]) -> None:
    _, result = converted
    halved = to_precision(result.graph, "float16").graph
    assert halved.narrowed_inputs == {"ids": "int64"}
    assert halved.narrowed_outputs == {"next": "int64"}


def test_cli_run_of_the_export(tmp_path: Path, converted: tuple[Path, Any]) -> None:
    model, result = converted
    export(result, tmp_path / "out", format="webnn", stem="ids")
    np.savez(tmp_path / "in.npz", ids=IDS)
    runner = CliRunner()
    res = runner.invoke(cli, ["run", str(tmp_path / "out" / "ids.webnn"), "--inputs",
                              str(tmp_path / "in.npz"), "-o", str(tmp_path / "o.npz")])
    assert res.exit_code == 0, res.output
    got = np.load(tmp_path / "o.npz")
    want = _onnxruntime(model, IDS)
    assert got["next"].dtype == np.int64
    np.testing.assert_array_equal(got["next"], want["next"])
    np.testing.assert_array_equal(got["emb"], want["emb"])
    np.savez(tmp_path / "big.npz", ids=np.full((2, 3), -2**40, dtype=np.int64))
    res = runner.invoke(cli, ["run", str(tmp_path / "out" / "ids.webnn"), "--inputs",
                              str(tmp_path / "big.npz"), "-o", str(tmp_path / "o.npz")])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "big.npz: input 'ids': value -1099511627776 does not fit " \
        "int32" in lines[0], res.output


def test_malformed_tables_are_refused(tmp_path: Path, converted: tuple[Path, Any]) -> None:
    _, result = converted
    export(result, tmp_path / "out", format="webnn", stem="ids")
    manifest = tmp_path / "out" / "ids.manifest.json"
    data = json.loads(manifest.read_text())
    assert data["sourceDataTypes"] == {"inputs": {"ids": "int64"}, "outputs": {"next": "int64"}}
    for table, message in (({"inputs": {"ids": "float64"}}, "integer data types"),
                           ({"inputs": {"nope": "int64"}}, "'nope', which is not a graph input"),
                           ({"outputs": {"emb": "int64"}}, "float32, which cannot carry int64"),
                           ([1], "must be an object")):
        manifest.write_text(json.dumps({**data, "sourceDataTypes": table}))
        with pytest.raises(WebnnFormatError, match=message):
            load(tmp_path / "out")


def test_carries() -> None:
    # a 32-bit operand carries the narrowed 64-bit type and every integer type it holds
    assert carries("int32", "int64") and carries("uint32", "uint64")
    assert carries("int32", "int8") and carries("int32", "uint8")
    assert not carries("int32", "uint32") and not carries("uint32", "int8")
    assert not carries("float32", "int64")
    assert parse_source_types({}, "f") == ({}, {})
