"""DENSIFY: sparse constants (CSR level, block-sparse) folded at conversion time, vs
LiteRT."""

from __future__ import annotations

import numpy as np

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, rand


def _vec(values) -> S.Int32VectorT:
    v = S.Int32VectorT()
    v.values = list(values)
    return v


def _dim(fmt: int, dense: int = 0, seg=None, idx=None) -> S.DimensionMetadataT:
    d = S.DimensionMetadataT()
    d.format, d.denseSize = fmt, dense
    if seg is not None:
        d.arraySegmentsType, d.arraySegments = S.SparseIndexVector.Int32Vector, _vec(seg)
        d.arrayIndicesType, d.arrayIndices = S.SparseIndexVector.Int32Vector, _vec(idx)
    return d


def _model(values: np.ndarray, shape, sparsity) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", shape)
    c = mb.tensor("c", shape, data=values, sparsity=sparsity)
    d = mb.tensor("d", shape)
    y = mb.output(mb.tensor("y", shape))
    mb.op("DENSIFY", [c], [d])
    mb.op("ADD", [x, d], [y], S.AddOptionsT())
    return mb.build()


def test_csr() -> None:
    # dense [[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]]
    sp = S.SparsityParametersT()
    sp.traversalOrder, sp.blockMap = [0, 1], []
    sp.dimMetadata = [_dim(0, 3), _dim(1, seg=[0, 2, 2, 4], idx=[1, 3, 0, 3])]
    values = np.array([1, 2, 3, 4], np.float32)
    res = check(_model(values, [3, 4], sp), [rand(3, 4)])
    assert res.report.to_dict()["ops"]["DENSIFY"]["folded"] == ["d"]


def test_block_sparse() -> None:
    # 4x4 with 2x2 blocks; blocks (0,1) and (1,0) present
    sp = S.SparsityParametersT()
    sp.traversalOrder, sp.blockMap = [0, 1, 2, 3], [0, 1]
    sp.dimMetadata = [_dim(0, 2), _dim(1, seg=[0, 1, 2], idx=[1, 0]), _dim(0, 2), _dim(0, 2)]
    values = np.arange(1, 9, dtype=np.float32)
    check(_model(values, [4, 4], sp), [rand(4, 4)])
