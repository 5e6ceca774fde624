"""4-bit constants in the webnn-graph files: int4/uint4 constants are written packed (two
values per byte, low nibble first) in the WGWT blob, in `@bytes` and in the manifest's
byteLength; they read back as the same int4/uint4 constants (text, JSON twin, safetensors
with one value per byte) and the reader also takes the reference tooling's one-value-per-byte
layout. A MatMulNBits model's exported weights are about a quarter of the float16 size."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from onnx import helper, numpy_helper

import converter
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.core.webnn.dtypes import pack_4bit
from converter.io.export.exporter import export, load
from converter.io.serialize.loader import loads
from converter.io.serialize.plan import plan
from converter.io.serialize.text_writer import to_webnn

RNG = np.random.default_rng(31)


def _graph() -> tuple[MLGraph, dict[str, np.ndarray]]:
    """Large (blob), small (@bytes, odd count) and uniform (@scalar) 4-bit constants of both
    types, dequantized and used."""
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [3, 64], "float32")
    w = RNG.integers(-8, 8, (64, 8)).astype(np.int8)
    wz = RNG.integers(-8, 8, (2, 8)).astype(np.int8)
    u = RNG.integers(0, 16, (1, 5)).astype(np.uint8)
    wd = b.dequantize_linear(b.constant(w, "int4"), b.constant(np.full((2, 8), 0.05, np.float32)
                                                               * RNG.uniform(0.5, 2, (2, 8))
                                                               .astype(np.float32)),
                             b.constant(wz, "int4"))
    ud = b.dequantize_linear(b.constant(u, "uint4"), b.constant(np.ones((1, 1), np.float32)),
                             b.constant(np.full((1, 1), 7, np.uint8), "uint4"))
    y = b.add(b.matmul(x, wd), b.reduce_sum(ud))
    graph = b.build({"y": y})
    return graph, {"w": w, "wz": wz, "u": u}


def _four_bit_constants(graph: MLGraph) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
    return sorted((c.data_type, c.shape, np.asarray(c.value)) for c in graph.constants
                  if c.data_type in ("int4", "uint4"))


def _same(a: MLGraph, b: MLGraph) -> None:
    ca, cb = _four_bit_constants(a), _four_bit_constants(b)
    assert [(t, s) for t, s, _ in ca] == [(t, s) for t, s, _ in cb] and len(ca) == 4
    for (_, _, va), (_, _, vb) in zip(ca, cb, strict=True):
        np.testing.assert_array_equal(va, vb)
    x = RNG.standard_normal((3, 64)).astype(np.float32)
    np.testing.assert_array_equal(a.context.compute(a, {"x": x})["y"],
                                  b.context.compute(b, {"x": x})["y"])


def test_blob_manifest_and_text_are_packed() -> None:
    graph, values = _graph()
    p = plan(graph, "g")
    files = to_webnn(graph, "g")
    manifest = json.loads(files.manifest)
    (entry,) = [e for e in manifest["tensors"].values() if e["dataType"] == "int4"]
    assert entry["shape"] == [64, 8] and entry["byteLength"] == 64 * 8 // 2
    blob = files.weights
    assert blob[entry["byteOffset"]:entry["byteOffset"] + entry["byteLength"]] == \
        pack_4bit(values["w"])
    text = files.text
    assert "i4[64, 8] @weights(" in text and "i4[2, 8] @bytes([" in text
    assert "u4[1, 5] @bytes([" in text and "u4[1, 1] @scalar(7)" in text
    odd = next(c for c in p.constants if c.operand.shape == (1, 5))
    assert odd.kind == "bytes"
    assert f"@bytes([{', '.join(str(v) for v in pack_4bit(values['u']))}])" in text
    assert len(pack_4bit(values["u"])) == 3  # 5 values, the last high nibble 0
    _same(graph, loads(files.text, files.weights, files.manifest))


def test_reference_tooling_layout_one_value_per_byte() -> None:
    """byteLength = element count (the reference tooling's 4-bit size) reads as one value per
    byte (low nibble)."""
    graph, values = _graph()
    files = to_webnn(graph, "g")
    manifest = json.loads(files.manifest)
    key, entry = next((k, e) for k, e in manifest["tensors"].items()
                      if e["dataType"] == "int4")
    unpacked = (values["w"].astype(np.uint8) & 0x0F).tobytes()  # one nibble per byte
    blob = files.weights + unpacked
    manifest["tensors"][key] = entry | {"byteOffset": len(files.weights),
                                        "byteLength": len(unpacked)}
    loaded = loads(files.text, blob, json.dumps(manifest))
    _same(graph, loaded)


@pytest.mark.parametrize(("fmt", "weights"), [("webnn", "blob"), ("webnn-json", "blob"),
                                              ("webnn", "safetensors")])
def test_export_and_load_round_trip(tmp_path: Path, fmt: str, weights: str) -> None:
    graph, _ = _graph()
    export(graph, tmp_path / "out", format=fmt, weights=weights, stem="m")
    suffix = ".webnn.json" if fmt == "webnn-json" else ".webnn"
    _same(graph, load(tmp_path / "out" / f"m{suffix}"))


def test_input_of_a_four_bit_type_is_refused() -> None:
    from converter.io.serialize.errors import WebnnFormatError

    text = ('webnn_graph "g" v1 {\n  inputs { x: i4[2]; }\n  nodes { y = identity(x); }\n'
            '  outputs { y; }\n}\n')
    with pytest.raises(WebnnFormatError, match="int4 is not supported for graph inputs"):
        loads(text)


def _matmul_nbits_model(k: int = 1024, n: int = 1024, block: int = 32) -> bytes:
    blocks = k // block
    b = RNG.integers(0, 256, (n, blocks, block // 2)).astype(np.uint8)
    scales = RNG.uniform(0.01, 0.1, (n, blocks)).astype(np.float16)
    node = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["Y"], domain="com.microsoft",
                            K=k, N=n, bits=4, block_size=block)
    graph = helper.make_graph(
        [node], "mnb", [helper.make_tensor_value_info("A", 10, [1, k])],
        [helper.make_tensor_value_info("Y", 10, [1, n])],
        [numpy_helper.from_array(b, "B"), numpy_helper.from_array(scales, "scales")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              ir_version=10)
    return bytes(model.SerializeToString())


def test_matmul_nbits_weights_are_a_quarter_of_float16(tmp_path: Path) -> None:
    """1024 x 1024 weight, 4 bits, block 32: the .weights file holds the packed uint4 weight
    (512 KiB) and the float16 scales (64 KiB); the default zero points (8) are one @scalar in
    the text. Total 0.281 of the 2 MiB float16 weight (a quarter plus the scales)."""
    path = tmp_path / "mnb.onnx"
    path.write_bytes(_matmul_nbits_model())
    result = converter.convert(str(path), target="spec")
    export(result, tmp_path / "out", format="webnn", stem="m")
    size = (tmp_path / "out" / "m.weights").stat().st_size
    fp16 = 1024 * 1024 * 2
    packed = 1024 * 1024 // 2
    scales = 1024 * (1024 // 32) * 2
    print(f"WEIGHTS mnb 1024x1024 block 32: {size} bytes = {size / fp16:.4f} x fp16 "
          f"({fp16} bytes); packed weight {packed}, scales {scales}")
    assert size == 8 + packed + scales
    assert size / fp16 < 0.285
    text = (tmp_path / "out" / "m.webnn").read_text()
    assert "u4[1024, 1024] @weights(" in text and "u4[1024, 32] @scalar(8)" in text
