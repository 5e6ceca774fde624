"""TFLite reader and convert_tflite(): names, signatures, optional inputs, operator codes,
dynamic dims, buffers (inline and offset/size form), options defaults, hostile files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from converter.core.errors import ConversionFailed, InvalidModel, UnresolvedDimensions
from converter.frontends.tflite.frontend import convert as convert_tflite
from converter.frontends.tflite.reader import read_model, read_tflite
from tests.op_mappings.tflite.tflite_builder import (
    ModelBuilder,
    S,
    check,
    litert_names,
    rand,
)


def _two_outputs() -> bytes:
    mb = ModelBuilder()
    a = mb.input("serving_default_a:0", [2, 3])
    b = mb.input("serving_default_b:0", [2, 3])
    s = mb.tensor("StatefulPartitionedCall:1", [2, 3])
    d = mb.tensor("StatefulPartitionedCall:0", [2, 3])
    mb.op("ADD", [a, b], [s], S.AddOptionsT())
    mb.op("SUB", [a, b], [d], S.SubOptionsT())
    mb.output(s)
    mb.output(d)
    mb.signature("serving_default", {"b": b, "a": a}, {"diff": d, "sum": s})
    return mb.build()


def test_names_follow_litert_and_subgraph_order() -> None:
    model = _two_outputs()
    ins, outs = litert_names(model)
    res = check(model, [rand(2, 3), rand(2, 3, seed=1)])
    assert res.input_names == ins
    assert res.output_names == outs == ["StatefulPartitionedCall:1", "StatefulPartitionedCall:0"]


def test_signature_aliases() -> None:
    model = _two_outputs()
    res = convert_tflite(model, signature="serving_default")
    assert res.input_names == ["a", "b"]
    assert res.output_names == ["sum", "diff"]
    a, b = rand(2, 3), rand(2, 3, seed=1)
    out = res.run({"a": a, "b": b})
    np.testing.assert_allclose(out["sum"], a + b, rtol=1e-6)
    np.testing.assert_allclose(out["diff"], a - b, rtol=1e-6)
    with pytest.raises(InvalidModel, match="serving_default"):
        convert_tflite(model, signature="nope")


def test_optional_input_kept_in_place_and_opcode() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 4])
    w = mb.const("w", rand(3, 4, seed=1))
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("FULLY_CONNECTED", [x, w, -1], [y], S.FullyConnectedOptionsT())
    src = read_tflite(mb.build())
    node = src.nodes[0]
    assert node.op_type == "FULLY_CONNECTED" and node.inputs[2] == ""
    assert node.input_infos[2] is None
    assert node.attrs["keep_num_dims"] is False and node.attrs["fused_activation_function"] == 0


def test_opcode_uses_max_of_both_fields() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3], "float32"))
    mb.op("GELU", [x], [y], S.GeluOptionsT())
    oc = mb.model.operatorCodes[0]
    assert oc.builtinCode > 127 and oc.deprecatedBuiltinCode == 127
    assert read_tflite(mb.build()).nodes[0].op_type == "GELU"
    oc.builtinCode, oc.deprecatedBuiltinCode = 0, S.BuiltinOperator.RELU  # old-style file
    assert read_tflite(mb.build()).nodes[0].op_type == "RELU"


def test_missing_options_get_schema_defaults() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("ADD", [x, x], [y])
    node = read_tflite(mb.build()).nodes[0]
    assert node.attrs == {"fused_activation_function": 0, "pot_scale_int16": True}


def _dynamic() -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [1, 3, 1], shape_signature=[-1, 3, -1])
    z = mb.input("z", [1], shape_signature=[-1])
    y = mb.output(mb.tensor("y", [1, 3, 1], shape_signature=[-1, 3, -1]))
    mb.op("RELU", [x], [y])
    zz = mb.output(mb.tensor("zz", [1], shape_signature=[-1]))
    mb.op("RELU", [z], [zz])
    return mb.build()


def test_dynamic_dims_default_to_stored_shape() -> None:
    res = convert_tflite(_dynamic())  # -1 dims run at the stored shape, as in LiteRT
    assert [vi.shape for vi in res.inputs] == [(1, 3, 1), (1,)]
    assert "x[0]=1, x[2]=1, z[0]=1" in res.report.warnings[-1]
    mb = ModelBuilder()
    x = mb.input("x", [], has_rank=False)
    y = mb.output(mb.tensor("y", [], has_rank=False))
    mb.op("RELU", [x], [y])
    with pytest.raises(UnresolvedDimensions, match="x: unknown rank"):
        convert_tflite(mb.build())
    with pytest.raises(InvalidModel, match="contradicts"):
        convert_tflite(_dynamic(), input_shapes={"x": [2, 4, 5], "z": [1]})
    res = check(_dynamic(), [rand(2, 3, 5, low=-1), rand(4, low=-1)],
                input_shapes={"x": [2, 3, 5], "z": [4]})
    assert list(res.output_descriptors["y"].shape) == [2, 3, 5]


def test_every_subgraph_parsed_and_metadata() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2])
    y = mb.output(mb.tensor("y", [2]))
    mb.op("RELU", [x], [y])
    mb.subgraph("second")
    a = mb.input("a", [3])
    b = mb.output(mb.tensor("b", [3]))
    mb.op("TANH", [a], [b])
    md = S.MetadataT()
    md.name, md.buffer = "min_runtime_version", len(mb.model.buffers)
    buf = S.BufferT()
    buf.data = list(b"1.5.0\0")
    mb.model.buffers.append(buf)
    mb.model.metadata = [md]
    model = read_model(mb.build())
    assert [len(s.nodes) for s in model.subgraphs] == [1, 1]
    assert model.subgraphs[1].nodes[0].op_type == "TANH"
    assert model.metadata["min_runtime_version"].startswith(b"1.5.0")


def test_offset_buffers(tmp_path: Path) -> None:
    """Files > 2 GB keep weights after the flatbuffer (Buffer.offset/size)."""
    wv = rand(2, 3, seed=5)
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    w = mb.tensor("w", [2, 3])
    buf = S.BufferT()
    buf.offset, buf.size = 1 << 40, wv.nbytes  # placeholder, fixed below
    mb.model.buffers.append(buf)
    mb.sg.tensors[w].buffer = len(mb.model.buffers) - 1
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("ADD", [x, w], [y], S.AddOptionsT())
    size = len(mb.build())
    buf.offset = (size + 15) // 16 * 16
    packed = mb.build()
    assert len(packed) == size
    data = packed + b"\0" * (buf.offset - size) + wv.tobytes()
    path = tmp_path / "big.tflite"
    path.write_bytes(data)
    res = check(data, [rand(2, 3)])
    ours = convert_tflite(path).run({"x": np.ones((2, 3), np.float32)})["y"]
    np.testing.assert_allclose(ours, 1 + wv, rtol=1e-6)
    assert res.output_names == ["y"]
    with pytest.raises(InvalidModel, match="outside the file"):
        read_model(data[:-4])


def test_hostile_files(tmp_path: Path) -> None:
    good = _two_outputs()
    cases = {"empty.tflite": b"", "short.tflite": b"TFL3", "ident.tflite": good[:4] + b"ONNX"
             + good[8:], "trunc.tflite": good[: len(good) // 2], "junk.tflite": good[:8]
             + bytes(range(256)) * 4}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InvalidModel, match=name.split(".")[0]):
            read_model(path)
    with pytest.raises(InvalidModel, match="does not exist"):
        read_model(tmp_path / "missing.tflite")


def test_unsupported_op_is_collected() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [4], "float32")
    t = mb.tensor("t", [4])
    y = mb.output(mb.tensor("y", [4]))
    mb.op("CUSTOM", [x], [t], custom_code="MyOp", custom_options=b"\1\2")
    mb.op("RELU", [t], [y])
    with pytest.raises(ConversionFailed) as info:
        convert_tflite(mb.build())
    err = info.value
    assert err.counts == {"custom::MyOp": 1}
    assert "op_mappings/tflite" in err.errors[0].hint
    node = read_tflite(mb.build()).nodes[0]
    assert node.domain == "custom" and node.attrs["custom_options"] == b"\1\2"
    assert "custom op 'MyOp'" in str(err) and "custom op 'MyOp'" in err.errors[0].message


@pytest.mark.parametrize("code", ["FlexRFFT", "TFLite_Detection_PostProcess"])
def test_unknown_custom_op_names_the_op(code: str) -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "float32")
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("CUSTOM", [x], [y], custom_code=code, custom_options=b"")
    with pytest.raises(ConversionFailed, match=f"custom op '{code}'") as info:
        convert_tflite(mb.build())
    assert info.value.errors[0].op_type == code
    if code.startswith("Flex"):
        assert "TensorFlow" in info.value.errors[0].message


def test_quantization_params_read() -> None:
    from tests.op_mappings.tflite.tflite_builder import Quant

    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "int8", quant=Quant([0.5], [-3]))
    w = mb.const("w", np.ones((3, 3), np.int8), quant=Quant([0.1, 0.2, 0.3], [0, 0, 0], 1))
    y = mb.output(mb.tensor("y", [2, 3], "int8", quant=Quant([0.5], [-3])))
    mb.op("ADD", [x, w], [y], S.AddOptionsT())
    src = read_tflite(mb.build())
    info = src.tensors["w"]
    assert info.quantized and info.quant is not None and info.quant.per_axis
    assert info.quant.axis == 1
    assert info.quant.zero_point.dtype == np.int64
    assert src.constants["w"].dtype == np.int8

