"""The reference executor: output ownership, intermediate release (kernel coverage:
tests/converter/core/webnn/test_operators.py)."""

from __future__ import annotations

import numpy as np

from converter.core.webnn import ML, MLGraphBuilder


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


def test_integer_div_truncates_toward_zero_at_the_extremes() -> None:
    lo, hi = -(2**63), 2**63 - 1
    a = np.array([lo, lo, lo, hi, -7, 7, -7, 5], np.int64)
    d = np.array([2, hi, 3, -2, 2, -2, -2, 0], np.int64)

    def trunc(x: int, y: int) -> int:  # exact Python integers, spec rule
        if y == 0:
            return 0
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q

    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("a", [8], "int64")
    y = b.input("d", [8], "int64")
    out = ctx.compute(b.build({"q": b.div(x, y)}), {"a": a, "d": d})["q"]
    assert out.tolist() == [trunc(int(p), int(q)) for p, q in zip(a, d, strict=True)]
