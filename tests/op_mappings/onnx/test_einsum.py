"""ONNX Einsum vs onnxruntime: matmul-like, batched, transpose, reductions, diagonal/trace,
outer products, implicit output, ellipsis broadcasting, three operands, integers."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (1, 4, 5)]),
    ("b...i,bi->b...", [(2, 3, 4), (2, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bij,jk->bki", [(2, 3, 4), (4, 5)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
]


@pytest.mark.parametrize(("eq", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_einsum(eq: str, shapes: list[tuple[int, ...]]) -> None:
    items = [(f"x{i}", rand(*s, seed=i)) for i, s in enumerate(shapes)]
    check_node("Einsum", items, {"equation": eq}, opset=12, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("eq", ["ij,jk->ik", "ij->j", "i,j->ij"])
def test_einsum_int(eq: str) -> None:
    shapes = {"ij,jk->ik": [(3, 4), (4, 5)], "ij->j": [(3, 4)], "i,j->ij": [(3,), (4,)]}[eq]
    items = [(f"x{i}", (rand(*s, seed=i) * 5).astype(np.int32)) for i, s in enumerate(shapes)]
    check_node("Einsum", items, {"equation": eq}, opset=12)
