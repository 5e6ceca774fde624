"""JavaScript export of 4-bit constants: the module passes `node --check`, and replayed in node
with a recording MLGraphBuilder every int4/uint4 constant is `builder.constant({dataType:
"int4"|"uint4", shape}, Uint8Array)` holding the packed bytes (two values per byte, low nibble
first) whether it comes from the weights blob, inline bytes or a splat."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.core.webnn.dtypes import pack_4bit, unpack_4bit
from converter.io.serialize.plan import plan
from tests.converter.io.export.node_harness import _node, _replay, _write, needs_node


def _graph() -> MLGraph:
    rng = np.random.default_rng(37)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2, 64], "float32")
    w = b.dequantize_linear(b.constant(rng.integers(-8, 8, (64, 4)).astype(np.int8), "int4"),
                            b.constant(rng.uniform(0.01, 0.1, (4, 4)).astype(np.float32)),
                            b.constant(np.full((4, 4), -3, np.int8), "int4"))
    v = b.dequantize_linear(b.constant(rng.integers(0, 16, (1, 7)).astype(np.uint8), "uint4"),
                            b.constant(np.ones((1, 1), np.float32)),
                            b.constant(np.full((1, 1), 5, np.uint8), "uint4"))
    return b.build({"y": b.add(b.matmul(x, w), b.reduce_sum(v))})


@needs_node
def test_four_bit_constants_are_packed_uint8_arrays(tmp_path: Path) -> None:
    graph = _graph()
    p = plan(graph, "the graph")
    kinds = {c.operand.shape: c.kind for c in p.constants if c.operand.data_type in
             ("int4", "uint4")}
    assert kinds == {(64, 4): "weights", (4, 4): "scalar", (1, 7): "bytes", (1, 1): "scalar"}
    js, _, weights = _write(graph, tmp_path)
    assert _node("--check", js).returncode == 0
    calls = [c for c in _replay(graph, js, weights, tmp_path)["calls"] if c["op"] == "constant"]
    seen = 0
    for c, call in zip(p.constants, calls, strict=True):
        desc, data = call["args"]
        assert desc == {"dataType": c.operand.data_type, "shape": list(c.operand.shape)}
        if c.operand.data_type not in ("int4", "uint4"):
            continue
        seen += 1
        assert data["typed"] == "Uint8Array"
        raw = bytes.fromhex(data["hex"])
        assert len(raw) == c.operand.descriptor.byte_length
        np.testing.assert_array_equal(  # a splat's padding nibble (odd count) may differ
            unpack_4bit(raw, c.operand.data_type, c.operand.shape), c.operand.value)
        if c.kind != "scalar":
            assert raw == pack_4bit(np.asarray(c.operand.value))
    assert seen == 4
