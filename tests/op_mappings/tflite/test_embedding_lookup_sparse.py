"""EMBEDDING_LOOKUP_SPARSE vs LiteRT: SUM / MEAN / SQRTN combiners, 2-D and 3-D sparse
indices, empty output rows, multi-dimensional embeddings, constant and computed ids and
weights, and the constant / ordering rules."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, S, check, op_model, rand

SUM, MEAN, SQRTN = 0, 1, 2


def model(ids, indices, dense, weights, value, combiner, *, const_ids=True,
          const_weights=False, const_indices=True):
    o = S.EmbeddingLookupSparseOptionsT()
    o.combiner = combiner
    out = [*dense[:-1], *value.shape[1:]]
    ins = [In(np.array(ids, np.int32), const_ids),
           In(np.array(indices, np.int32), const_indices),
           In(np.array(dense, np.int32), True), In(weights, const_weights), In(value, True)]
    return op_model("EMBEDDING_LOOKUP_SPARSE", ins, [(out, "float32")], o)


@pytest.mark.parametrize("combiner", [SUM, MEAN, SQRTN])
@pytest.mark.parametrize("const_ids", [True, False])
def test_2d_indices(combiner: int, const_ids: bool) -> None:
    # rows 0 (two entries), 1 (empty), 2 (three entries), 3 (one entry)
    indices = [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2], [3, 0]]
    ids = [1, 4, 0, 4, 2, 3]
    weights = rand(6, low=0.2, high=2.0, seed=1)
    m, feeds = model(ids, indices, [4, 3], weights, rand(5, 3, seed=2), combiner,
                     const_ids=const_ids)
    check(m, feeds)


@pytest.mark.parametrize("combiner", [SUM, MEAN, SQRTN])
def test_3d_indices_multidim_embedding(combiner: int) -> None:
    indices = [[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 1, 0], [1, 1, 3]]
    ids = [0, 2, 2, 1, 3]
    m, feeds = model(ids, indices, [2, 2, 4], rand(5, low=0.5, high=1.5, seed=3),
                     rand(4, 2, 3, seed=4), combiner)
    check(m, feeds)


def test_constant_weights() -> None:
    indices = [[0, 0], [1, 0], [1, 1]]
    m, feeds = model([2, 0, 1], indices, [2, 2], rand(3, low=0.5, high=1, seed=5),
                     rand(3, 4, seed=6), MEAN, const_weights=True)
    check(m, feeds)


def test_indices_must_be_constant() -> None:
    m, _ = model([0, 1], [[0, 0], [1, 0]], [2, 1], rand(2), rand(2, 2), SUM,
                 const_indices=False)
    with pytest.raises(ConversionFailed, match="known at conversion time"):
        convert_tflite(m)


def test_unordered_rows_rejected() -> None:
    m, _ = model([0, 1], [[1, 0], [0, 0]], [2, 1], rand(2), rand(2, 2), SUM)
    with pytest.raises(ConversionFailed, match="grouped by output row"):
        convert_tflite(m)
