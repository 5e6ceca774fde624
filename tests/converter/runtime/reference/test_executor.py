"""The reference executor: output ownership, intermediate release, kernel coverage."""

from __future__ import annotations

import numpy as np

from converter.runtime.reference.registry import KERNELS
from converter.webnn import ML, MLGraphBuilder
from converter.webnn.limits import OP_LIMITS


def test_every_spec_op_has_a_kernel() -> None:
    assert sorted(set(OP_LIMITS) - set(KERNELS)) == []


def test_outputs_never_alias_inputs_or_constants() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", [2, 3], "float32")
    c = b.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    graph = b.build({"r": b.reshape(x, [3, 2]), "t": b.transpose(c), "i": b.identity(x)})
    data = np.ones((2, 3), np.float32)
    out = ctx.compute(graph, {"x": data})
    for name, arr in out.items():
        assert arr.flags.writeable, name
        assert not np.may_share_memory(arr, data), name
    out["t"][0, 0] = 42  # must not corrupt the constant
    assert ctx.compute(graph, {"x": data})["t"][0, 0] == 0


def test_float16_end_to_end() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", [3], "float16")
    graph = b.build({"y": b.mul(b.add(x, x), x)})
    v = np.array([0.1, 100.0, -3.5], np.float16)
    expected = ((v.astype(np.float64) + v.astype(np.float64)) * v.astype(np.float64))
    # Each op rounds once to float16: (x + x) is exact, then one rounding of the product.
    out = ctx.compute(graph, {"x": v})["y"]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, expected.astype(np.float16))
