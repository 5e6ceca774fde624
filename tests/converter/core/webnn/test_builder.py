"""MLGraphBuilder core: input(), constant(), build() and builder state (spec section 1.6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from converter.core.webnn import (
    ML,
    MLGraphBuilder,
    MLInvalidStateError,
    MLTypeError,
)


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


def test_input_rules(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 3], "float32")
    assert (x.shape, x.data_type) == ((2, 3), "float32")
    with pytest.raises(MLTypeError, match="input: duplicate input name 'x'"):
        b.input("x", [2], "float32")
    with pytest.raises(MLTypeError, match="non-empty"):
        b.input("", [2], "float32")
    with pytest.raises(MLTypeError, match="not a valid dimension"):
        b.input("zero", [2, 0], "float32")
    with pytest.raises(MLTypeError, match="data type 'float64'"):
        b.input("f64", [2], "float64")
    with pytest.raises(MLTypeError, match="outside the unsigned long range"):
        b.input("neg", [-1], "float32")
    with pytest.raises(MLTypeError, match="elements"):
        b.input("big", [2**16, 2**16], "float32")
    with pytest.raises(MLTypeError, match="rank 9"):
        b.input("r9", [1] * 9, "float32")
    assert b.input("scalar", [], "int64").shape == ()


def test_constant_copies_data(b: MLGraphBuilder) -> None:
    data = np.arange(4, dtype=np.float32)
    c = b.constant(data)
    data[0] = 100
    assert c.value is not None and c.value[0] == 0 and not c.value.flags.writeable


def test_constant_forms(b: MLGraphBuilder) -> None:
    assert b.constant(np.float16(1.5)).shape == ()
    s = b.constant(300.7, data_type="uint8")  # spec cast: clamp then round half to even
    assert s.value is not None and s.value.item() == 255
    assert b.constant(2.5, data_type="int32").value.item() == 2  # type: ignore[union-attr]
    assert b.constant(float("nan"), data_type="int8").value.item() == 0  # type: ignore[union-attr]
    filled = b.constant(7, data_type="int64", shape=[2, 2])
    assert filled.value is not None and filled.value.tolist() == [[7, 7], [7, 7]]
    with pytest.raises(MLTypeError, match="data_type is required"):
        b.constant([1.0, 2.0])
    with pytest.raises(MLTypeError, match="numpy dtype float64 is not a WebNN data type"):
        b.constant(np.zeros(2))
    with pytest.raises(MLTypeError, match="do not fill shape"):
        b.constant(np.zeros(3, np.float32), shape=[2, 2])


def test_build_rules(b: MLGraphBuilder) -> None:
    x = b.input("x", [2], "float32")
    c = b.constant(np.ones(2, np.float32))
    with pytest.raises(MLTypeError, match="non-empty mapping"):
        b.build({})
    with pytest.raises(MLTypeError, match="graph input; wrap it with identity"):
        b.build({"y": x})
    with pytest.raises(MLTypeError, match="graph constant"):
        b.build({"y": c})
    with pytest.raises(MLTypeError, match="non-empty strings"):
        b.build({"": b.relu(x)})
    other = MLGraphBuilder(b.context)
    with pytest.raises(MLTypeError, match="not an operand of this builder"):
        b.build({"y": other.relu(other.input("x", [1], "float32"))})


def test_build_keeps_only_reachable_parts(b: MLGraphBuilder) -> None:
    x = b.input("x", [2], "float32")
    unused = b.input("unused", [2], "float32")
    y = b.add(x, b.constant(np.ones(2, np.float32)))
    b.relu(unused)  # unreachable operation
    graph = b.build({"y": y})
    assert list(graph.inputs) == ["x"]
    assert [op.op for op in graph.operations] == ["add"]
    assert len(graph.constants) == 1
    with pytest.raises(MLTypeError, match="unexpected \\['unused'\\]"):
        b.context.compute(graph, {"x": np.zeros(2, np.float32),
                                  "unused": np.zeros(2, np.float32)})


def test_graph_without_inputs(b: MLGraphBuilder) -> None:
    y = b.neg(b.constant(np.array([1, -2], np.int32)))
    graph = b.build({"y": y})
    assert b.context.compute(graph, {})["y"].tolist() == [-1, 2]


def test_topological_order_with_shared_subexpressions(b: MLGraphBuilder) -> None:
    x = b.input("x", [3], "float32")
    e = b.exp(x)
    s = b.add(e, b.mul(e, e))
    graph = b.build({"s": s, "e2": b.identity(e)})
    order = [op.op for op in graph.operations]
    assert order.index("exp") < order.index("mul") < order.index("add")
    assert order.count("exp") == 1
    v = np.array([0.0, 1.0, -1.0], np.float32)
    out = b.context.compute(graph, {"x": v})
    ev = np.exp(v.astype(np.float64))
    np.testing.assert_allclose(out["s"], ev + ev * ev, rtol=1e-6)


def test_one_build_per_builder(b: MLGraphBuilder) -> None:
    x = b.input("x", [2], "float32")
    b.build({"y": b.relu(x)})
    with pytest.raises(MLInvalidStateError):
        b.build({"z": b.relu(x)})
    with pytest.raises(MLInvalidStateError):
        b.relu(x)
    with pytest.raises(MLInvalidStateError):
        b.input("w", [2], "float32")
    with pytest.raises(MLInvalidStateError):
        b.constant(np.zeros(1, np.float32))


def test_lost_context_invalidates_builder() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    ctx.destroy()
    with pytest.raises(MLInvalidStateError):
        b.input("x", [1], "float32")
    with pytest.raises(MLInvalidStateError):
        MLGraphBuilder(ctx)


def test_operands_are_immutable(b: MLGraphBuilder) -> None:
    x = b.input("x", [2], "float32")
    with pytest.raises(AttributeError):
        x.descriptor = None  # type: ignore[misc, assignment]


def test_constant_shares_only_immutable_memory(b: MLGraphBuilder, tmp_path: Path) -> None:
    raw = np.arange(6, dtype=np.float32).tobytes()
    frozen = np.frombuffer(raw, np.float32)  # read-only view of immutable bytes
    assert b.constant(frozen).value is frozen
    path = tmp_path / "w.bin"
    path.write_bytes(raw)
    mapped = np.memmap(path, np.float32, mode="r")
    assert np.shares_memory(b.constant(mapped).value, mapped)
    owned = np.arange(6, dtype=np.float32)
    owned.setflags(write=False)  # the owner could make it writable again: copy
    assert not np.shares_memory(b.constant(owned).value, owned)
    writable_base = np.arange(6, dtype=np.float32)
    view = writable_base[:]
    view.setflags(write=False)
    assert not np.shares_memory(b.constant(view).value, writable_base)
    shared = np.frombuffer(bytearray(raw), np.float32)  # writable buffer underneath
    assert not np.shares_memory(b.constant(shared).value, shared)


def test_packed_four_bit_constant(b: MLGraphBuilder) -> None:
    """packed_constant keeps the spec's packed bytes (two values per byte, the first in the
    low nibble) as they are; the value is those nibbles, unpacked on first read (int4
    sign-extended), checked here against the nibbles computed by hand."""
    raw = bytes([0x21, 0x43, 0xF8, 0x07])  # nibbles low first: 1 2 3 4 8 15 7 0
    u = b.packed_constant(raw, "uint4", [2, 4])
    assert (u.data_type, u.shape) == ("uint4", (2, 4))
    assert u.packed is not None and u.packed.tobytes() == raw and not u.packed.flags.writeable
    assert u.value is not None and u.value.tolist() == [[1, 2, 3, 4], [8, 15, 7, 0]]
    assert u.value.dtype == np.uint8 and not u.value.flags.writeable
    s = b.packed_constant(np.frombuffer(raw, np.uint8), "int4", [7])  # odd: padding nibble
    assert s.value is not None and s.value.tolist() == [1, 2, 3, 4, -8, -1, 7]
    frozen = np.frombuffer(raw, np.uint8)  # immutable bytes are shared, others copied
    assert np.shares_memory(b.packed_constant(frozen, "uint4", [8]).packed, frozen)
    owned = np.frombuffer(bytearray(raw), np.uint8)
    assert not np.shares_memory(b.packed_constant(owned, "uint4", [8]).packed, owned)
    with pytest.raises(MLTypeError, match=r"uint4\[3, 4\] takes 6 packed bytes, got 4"):
        b.packed_constant(raw, "uint4", [3, 4])
    with pytest.raises(MLTypeError, match="data type 'uint8'"):
        b.packed_constant(raw, "uint8", [4])
    assert b.constant(np.zeros(2, np.float32)).packed is None
