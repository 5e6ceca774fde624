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


def test_int8_sparse_weights() -> None:
    """An int8 sparse constant densified, then used as int8 per-tensor quantized weights of
    an int8 ADD (LiteRT's DENSIFY supports float32, float16 and int8)."""
    from tests.op_mappings.tflite.tflite_builder import Quant

    sp = S.SparsityParametersT()
    sp.traversalOrder, sp.blockMap = [0, 1], []
    sp.dimMetadata = [_dim(0, 3), _dim(1, seg=[0, 2, 2, 4], idx=[1, 3, 0, 3])]
    q = Quant([0.05], [0])
    mb = ModelBuilder()
    x = mb.input("x", [3, 4], "int8", quant=Quant([0.04], [3]))
    c = mb.tensor("c", [3, 4], "int8", data=np.array([10, -20, 30, -127], np.int8),
                  sparsity=sp, quant=q)
    d = mb.tensor("d", [3, 4], "int8", quant=q)
    y = mb.output(mb.tensor("y", [3, 4], "int8", quant=Quant([0.08], [-2])))
    mb.op("DENSIFY", [c], [d])
    mb.op("ADD", [x, d], [y], S.AddOptionsT(), version=2)
    check(mb.build(), [rand(3, 4, low=-128, high=127, dtype="int8")], steps=1)
