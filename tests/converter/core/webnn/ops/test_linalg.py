"""Validation of matmul and gemm: every spec TypeError rule, the output descriptors, the
options stored in the graph, plus the limit samples."""

from __future__ import annotations

import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample

SAMPLES: dict[str, Sample] = {
    "matmul": Sample(lambda b, t: b.matmul(b.input("a", [2, 3], t["a"]),
                                           b.input("b", [3, 4], t["b"])),
                     groups=[("a", "b")]),
    "gemm": Sample(lambda b, t: b.gemm(b.input("a", [2, 3], t["a"]),
                                       b.input("b", [3, 4], t["b"]),
                                       c=b.input("c", [4], t["c"])),
                   groups=[("a", "b", "c")]),
}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


@pytest.mark.parametrize(("a", "bb", "out"), [
    ([2, 3], [3, 4], (2, 4)),
    ([5, 2, 3], [3, 4], (5, 2, 4)),
    ([2, 3], [6, 3, 4], (6, 2, 4)),
    ([2, 1, 3, 4], [5, 4, 6], (2, 5, 3, 6)),
    ([1, 7, 2, 3], [7, 1, 3, 1], (7, 7, 2, 1)),
])
def test_matmul_shapes(b: MLGraphBuilder, a: list[int], bb: list[int],
                       out: tuple[int, ...]) -> None:
    y = b.matmul(b.input("a", a, "float16"), b.input("b", bb, "float16"))
    assert (y.shape, y.data_type) == (out, "float16")
    assert dict(y.operator.options) == {}  # type: ignore[union-attr]


def test_matmul_rules(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(MLTypeError, match=r"matmul: a columns \(3\) must equal b rows \(4\)"):
        b.matmul(x, b.input("y", [4, 3], "float32"))
    with pytest.raises(MLTypeError, match=r"matmul: b rank 1 is outside the supported range"):
        b.matmul(x, b.input("v", [3], "float32"))  # no 1-D promotion
    with pytest.raises(MLTypeError, match=r"matmul: a rank 1 is outside the supported range"):
        b.matmul(b.input("u", [2], "float32"), x)
    with pytest.raises(MLTypeError, match=r"matmul: b rank 0 is outside the supported range"):
        b.matmul(x, b.input("s", [], "float32"))
    with pytest.raises(MLTypeError, match=r"matmul: b data type float16 must equal a data type"):
        b.matmul(x, b.input("h", [3, 2], "float16"))
    with pytest.raises(MLTypeError, match=r"matmul: a data type int32 is not one of"):
        b.matmul(b.input("i", [2, 3], "int32"), b.input("j", [3, 2], "int32"))
    with pytest.raises(MLTypeError, match=r"matmul: batch dimensions of a and b shapes \[2\] and "
                                          r"\[3\] are not broadcastable"):
        b.matmul(b.input("p", [2, 2, 3], "float32"), b.input("q", [3, 3, 2], "float32"))


def test_gemm_descriptor_and_options(b: MLGraphBuilder) -> None:
    a, bb = b.input("a", [3, 2], "float32"), b.input("b", [4, 3], "float32")
    y = b.gemm(a, bb, a_transpose=True, b_transpose=True)
    assert (y.shape, y.data_type) == ((2, 4), "float32")
    assert dict(y.operator.options) == {"alpha": 1.0, "beta": 1.0,  # type: ignore[union-attr]
                                        "aTranspose": True, "bTranspose": True}
    for c_shape in ([], [1], [4], [1, 4], [2, 1], [2, 4]):
        c = b.input(f"c{c_shape}", c_shape, "float32")
        z = b.gemm(a, bb, c=c, alpha=2, beta=0.5, a_transpose=True, b_transpose=True, label="g")
        assert z.shape == (2, 4)
        assert dict(z.operator.options) == {  # type: ignore[union-attr]
            "c": c, "alpha": 2.0, "beta": 0.5, "aTranspose": True, "bTranspose": True,
            "label": "g"}


def test_gemm_rules(b: MLGraphBuilder) -> None:
    a, bb = b.input("a", [2, 3], "float32"), b.input("b", [3, 4], "float32")
    with pytest.raises(MLTypeError, match=r"gemm: K of a \(2\) must equal K of b \(3\)"):
        b.gemm(a, bb, a_transpose=True)
    with pytest.raises(MLTypeError, match=r"gemm: K of a \(3\) must equal K of b \(4\)"):
        b.gemm(a, bb, b_transpose=True)
    with pytest.raises(MLTypeError, match=r"gemm: a rank 3 is outside the supported range"):
        b.gemm(b.input("a3", [1, 2, 3], "float32"), bb)
    with pytest.raises(MLTypeError, match=r"gemm: b rank 1 is outside the supported range"):
        b.gemm(a, b.input("b1", [3], "float32"))
    with pytest.raises(MLTypeError, match=r"gemm: c rank 3 is outside the supported range"):
        b.gemm(a, bb, c=b.input("c3", [1, 2, 4], "float32"))
    for shape in ([3], [2, 3], [4, 4], [3, 1]):
        with pytest.raises(MLTypeError, match=r"gemm: c shape .* is not broadcastable to \[2, 4\]"):
            b.gemm(a, bb, c=b.input(f"c{shape}", shape, "float32"))
    with pytest.raises(MLTypeError, match=r"gemm: b data type float16 must equal a data type"):
        b.gemm(a, b.input("h", [3, 4], "float16"))
    with pytest.raises(MLTypeError, match=r"gemm: c data type float16 must equal a data type"):
        b.gemm(a, bb, c=b.input("hc", [4], "float16"))
    with pytest.raises(MLTypeError, match=r"gemm: a data type int32 is not one of"):
        b.gemm(b.input("i", [2, 3], "int32"), b.input("j", [3, 4], "int32"))
    for opt in ("alpha", "beta"):
        with pytest.raises(MLTypeError, match=rf"gemm: {opt} must be a finite number"):
            b.gemm(a, bb, **{opt: float("inf")})
        with pytest.raises(MLTypeError, match=rf"gemm: {opt} must be a number"):
            b.gemm(a, bb, **{opt: None})
    with pytest.raises(MLTypeError, match=r"gemm: aTranspose must be a boolean"):
        b.gemm(a, bb, a_transpose=1)
    with pytest.raises(MLTypeError, match=r"gemm: bTranspose must be a boolean"):
        b.gemm(a, bb, b_transpose="no")
