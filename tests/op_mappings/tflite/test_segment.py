"""SEGMENT_SUM and UNSORTED_SEGMENT_SUM/MAX/MIN/PROD vs LiteRT: sorted ids with repeats
and gaps (empty segments), unsorted ids, multi-dimensional ids, empty and out-of-range
segments, float32 and int32 data, constant and computed ids, and the constant rules."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, S, check, op_model, rand

KINDS = ["SUM", "MAX", "MIN", "PROD"]


@pytest.mark.parametrize("ids", [[0, 0, 1, 2, 2], [0, 1, 1, 1, 2], [0, 1, 2, 3, 4],
                                 [0, 0, 0, 0, 0]])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_segment_sum(ids: list[int], dtype: str) -> None:
    data = rand(5, 3, 2, low=-20, high=20, seed=1, dtype=dtype)
    rows = ids[-1] + 1
    m, feeds = op_model("SEGMENT_SUM", [In(data), In(np.array(ids, np.int32), True)],
                        [([rows, 3, 2], dtype)], S.SegmentSumOptionsT())
    check(m, feeds)


def test_segment_sum_gaps_numpy_oracle() -> None:
    """Ids that skip values (empty segments, TensorFlow's semantics: zeros) are rejected by
    LiteRT's kernel at run time, so this case is checked against a float64 numpy oracle."""
    data = rand(5, 3, low=-2, high=2, seed=6)
    ids = np.array([1, 1, 3, 3, 6], np.int32)
    m, _ = op_model("SEGMENT_SUM", [In(data), In(ids, True)], [([7, 3], "float32")],
                    S.SegmentSumOptionsT())
    result = convert_tflite(m)
    got = result.run({result.input_names[0]: data})[result.output_names[0]]
    want = np.zeros((7, 3))
    np.add.at(want, ids, data.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def unsorted(kind: str, data: np.ndarray, ids: np.ndarray, num: int, *,
             const_ids: bool = True) -> tuple[bytes, list[np.ndarray]]:
    out = [num, *data.shape[ids.ndim:]]
    return op_model(f"UNSORTED_SEGMENT_{kind}",
                    [In(data), In(ids, const_ids), In(np.array(num, np.int32), True)],
                    [(out, data.dtype.name)], getattr(S, f"UnsortedSegment{kind.title()}OptionsT")())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ids,num", [([2, 0, 2, 3, 0, 2], 5),   # empty segments 1 and 4
                                     ([1, 1, 1, 1, 1, 1], 2),
                                     ([3, 2, 1, 0, 1, 2], 4)])
@pytest.mark.parametrize("const_ids", [True, False])
def test_unsorted_float(kind: str, ids: list[int], num: int, const_ids: bool) -> None:
    data = rand(6, 4, low=-2, high=2, seed=2)
    m, feeds = unsorted(kind, data, np.array(ids, np.int32), num, const_ids=const_ids)
    check(m, feeds)


@pytest.mark.parametrize("kind", KINDS)
def test_unsorted_int32(kind: str) -> None:
    data = rand(6, 3, low=-9, high=9, seed=3, dtype="int32")
    m, feeds = unsorted(kind, data, np.array([1, 4, 1, 0, 4, 1], np.int32), 6)
    check(m, feeds)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("const_ids", [True, False])
def test_unsorted_2d_ids(kind: str, const_ids: bool) -> None:
    data = rand(2, 3, 4, low=-2, high=2, seed=4)
    ids = np.array([[0, 2, 2], [1, 0, 2]], np.int32)
    m, feeds = unsorted(kind, data, ids, 4, const_ids=const_ids)
    check(m, feeds)


def test_unsorted_ids_cover_all_data_dims() -> None:
    data = rand(3, 4, seed=5)
    ids = np.array([[0, 1, 2, 0], [1, 1, 2, 2], [0, 0, 0, 3]], np.int32)
    m, feeds = unsorted("SUM", data, ids, 4)
    check(m, feeds)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("const_ids", [True, False])
def test_unsorted_negative_ids_dropped(kind: str, const_ids: bool) -> None:
    data = rand(5, 2, low=-2, high=2, seed=7)
    m, feeds = unsorted(kind, data, np.array([0, -1, 2, -3, 0], np.int32), 3,
                        const_ids=const_ids)
    check(m, feeds)


def test_unsorted_id_out_of_range_rejected() -> None:
    m, _ = unsorted("SUM", rand(3, 2), np.array([0, 3, 1], np.int32), 3)
    with pytest.raises(ConversionFailed, match="not below num_segments 3"):
        convert_tflite(m)


def test_segment_sum_ids_must_be_constant() -> None:
    m, _ = op_model("SEGMENT_SUM", [In(rand(3, 2)), In(np.array([0, 0, 1], np.int32))],
                    [([2, 2], "float32")], S.SegmentSumOptionsT())
    with pytest.raises(ConversionFailed, match="known at conversion time"):
        convert_tflite(m)


def test_segment_sum_unsorted_rejected() -> None:
    m, _ = op_model("SEGMENT_SUM", [In(rand(3, 2)), In(np.array([1, 0, 1], np.int32), True)],
                    [([2, 2], "float32")], S.SegmentSumOptionsT())
    with pytest.raises(ConversionFailed, match="sorted"):
        convert_tflite(m)


def test_unsorted_ids_shape_rule() -> None:
    m, _ = unsorted("MAX", rand(3, 2), np.array([0, 1], np.int32), 2)
    with pytest.raises(ConversionFailed, match="not a prefix"):
        convert_tflite(m)
