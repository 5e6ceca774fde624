"""Format detection by content (`converter.frontends.detect`), the ONNX ModelProto sniff and
the foreign-kind table (`converter.frontends.foreign`)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import onnx
import pytest

import converter
from converter.frontends.detect import detect_format
from converter.frontends.foreign import ForeignFormat, identify
from converter.frontends.onnx import MODEL_PROTO_FIELDS, looks_like_model_proto
from converter.frontends.protobuf_sniff import protobuf_fields
from tests.cli.models import tiny_cnn, tiny_tflite
from tests.cli.test_file_kinds import field, graphdef, saved_model, varint


@pytest.fixture(scope="module")
def onnx_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return tiny_cnn(tmp_path_factory.mktemp("m") / "tiny.onnx").read_bytes()


def test_model_proto_fields_match_onnx() -> None:
    types = {3: 0, 9: 2, 11: 2}  # int64, string, message -> wire type
    assert MODEL_PROTO_FIELDS == {f.number: types[f.type]
                                  for f in onnx.ModelProto.DESCRIPTOR.fields}


def test_webnn_files_written_by_the_exporters(onnx_bytes: bytes, tmp_path: Path) -> None:
    """foreign's copies of the WebNN magic values agree with what converter.io.export writes
    (also with renamed graph inputs, which the safetensors metadata records)."""
    result = converter.convert(onnx_bytes, free_dims={"batch": 1})
    converter.export(result, tmp_path / "text", format="webnn")
    converter.export(result, tmp_path / "json", format="webnn-json", weights="safetensors")
    expected = {"text/model.webnn": "webnn", "text/model.weights": "webnn-weights",
                "text/model.manifest.json": "webnn-manifest",
                "json/model.webnn.json": "webnn-json", "json/model.safetensors": "webnn-weights"}
    for name, key in expected.items():
        data = (tmp_path / name).read_bytes()
        # without the graph next to it (bytes), a safetensors file with no renamed names in
        # its metadata is just a safetensors file
        plain = "safetensors" if name.endswith(".safetensors") else key
        for model, want in ((tmp_path / name, key), (data, plain)):
            found = identify(model)
            assert found is not None and found[0].key == want, (name, found)


def test_onnx_and_tflite_by_content(onnx_bytes: bytes, tmp_path: Path) -> None:
    tfl = tiny_tflite()
    assert looks_like_model_proto(onnx_bytes[:64])
    assert not looks_like_model_proto(tfl[:64])
    for name, data, fmt in (("a.bin", onnx_bytes, "onnx"), ("b.bin", tfl, "tflite"),
                            ("c.tflite", onnx_bytes, "onnx"), ("d.onnx", tfl, "tflite")):
        (tmp_path / name).write_bytes(data)
        assert detect_format(tmp_path / name) == fmt, name
        assert detect_format(data) == fmt


def test_model_proto_sniff_rejects_other_protobufs(tmp_path: Path) -> None:
    assert not looks_like_model_proto(graphdef()[:64])
    folder = saved_model(tmp_path / "sm")
    assert not looks_like_model_proto((folder / "saved_model.pb").read_bytes()[:64])
    assert not looks_like_model_proto(b"")
    assert not looks_like_model_proto(varint(1 << 3) + varint(500))  # ir_version 500
    assert not looks_like_model_proto(varint(1 << 3) + varint(8) + field(2, b"a\x01b"))
    model = onnx.ModelProto(ir_version=9, producer_name="pytorch", producer_version="2.5")
    assert looks_like_model_proto(model.SerializeToString()[:64])


def test_protobuf_fields() -> None:
    data = varint(1 << 3) + varint(300) + field(2, b"abc") + b"\x0d\x01\x00\x00\x00"
    assert list(protobuf_fields(data)) == [(1, 0, 300), (2, 2, b"abc"), (1, 5, 1)]
    assert list(protobuf_fields(b"\x0b")) == [(0, -1, 0)]  # a group start: not a field
    assert list(protobuf_fields(field(2, b"abcdef")[:4])) == [(2, 2, b"ab")]  # truncated


def test_fallback_and_suffix_after_foreign_kinds(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"\xff\xfe not a model at all")
    assert detect_format(junk) == "tflite"  # the TFLite reader says what is wrong
    other = tmp_path / "junk.dat"
    other.write_bytes(b"\xff\xfe not a model at all")
    assert detect_format(other) == "onnx"  # the fallback
    gd = tmp_path / "graph.tflite"
    gd.write_bytes(graphdef())
    with pytest.raises(ForeignFormat) as info:
        detect_format(gd)
    assert info.value.kind == "tensorflow-graphdef"
    assert info.value.to_dict()["reason_code"] == "foreign_format"
    with pytest.raises(ForeignFormat, match="is a TensorFlow frozen graph"):
        detect_format(graphdef())


def test_bytes_messages_name_a_placeholder() -> None:
    with pytest.raises(ForeignFormat) as info:
        detect_format(graphdef())
    assert str(info.value).startswith("<bytes> is a TensorFlow frozen graph")
    assert "--graphdef FILE " in str(info.value)


def test_identify_kinds(tmp_path: Path) -> None:
    cases = {
        b"\x89HDF\r\n\x1a\n" + bytes(8): "hdf5",
        bytes(512) + b"\x89HDF\r\n\x1a\n": "hdf5",  # after a user block
        b"\x93NUMPY\x01\x00": "numpy",
        b"GGUF\x03\x00\x00\x00": "gguf",
        b"\x10\x00\x00\x00ORTM" + bytes(8): "onnxruntime-ort",
        b"\x1f\x8b\x08\x00": "gzip",
        bytes(257) + b"ustar\x0000": "tar",
        b'{"format": "webnn-graph-json", "version": 1}': "webnn-json",
        b'{"modelTopology": {}, "weightsManifest": []}': "tensorflow-js",
        b'# a comment\n\nwebnn_graph "m" v1 {\n}\n': "webnn",
        b"WGWT\x01\x00\x00\x00": "webnn-weights",
    }
    for data, key in cases.items():
        found = identify(data)
        assert found is not None and found[0].key == key, (data, found)
    for data in (b"", b"hello", graphdef()[:3], tiny_tflite()):
        assert identify(data) is None


def test_zip_kinds(tmp_path: Path) -> None:
    def archive(*names: str) -> Path:
        path = tmp_path / f"a{len(list(tmp_path.iterdir()))}.zip"
        with zipfile.ZipFile(path, "w") as z:
            for n in names:
                z.writestr(n, b"")
        return path

    def key(path: Path) -> str:
        found = identify(path, (".onnx", ".tflite"))
        assert found is not None
        return found[0].key

    assert key(archive("m/data.pkl", "m/version")) == "pytorch"
    assert key(archive("m/data.pkl", "m/constants.pkl")) == "torchscript"
    assert key(archive("config.json", "metadata.json", "model.weights.h5")) == "keras"
    assert key(archive("x.npy", "y.npy")) == "numpy-npz"
    assert key(archive("readme.txt")) == "zip"
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 truncated")
    found = identify(bad)
    assert found is not None and found[1] == {"entries": " (unreadable)"}


def test_folder_kinds(tmp_path: Path) -> None:
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    (hf / "model.safetensors").write_bytes(b"")
    with pytest.raises(ForeignFormat, match="Hugging Face model folder.*optimum-cli export"):
        detect_format(hf)
    tfjs = tmp_path / "tfjs"
    tfjs.mkdir()
    (tfjs / "model.json").write_text("{}")
    (tfjs / "group1-shard1of1.bin").write_bytes(b"")
    with pytest.raises(ForeignFormat, match="TensorFlow.js") as info:
        detect_format(tfjs)
    assert info.value.kind == "tensorflow-js"
    with pytest.raises(ForeignFormat, match="TensorFlow SavedModel"):
        detect_format(saved_model(tmp_path / "sm"))
