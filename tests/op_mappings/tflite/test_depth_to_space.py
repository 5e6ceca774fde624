"""DEPTH_TO_SPACE / SPACE_TO_DEPTH with block sizes 2 and 3 vs LiteRT."""

from __future__ import annotations

import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


@pytest.mark.parametrize("block", [2, 3])
def test_depth_to_space(block: int) -> None:
    o = S.DepthToSpaceOptionsT()
    o.blockSize = block
    x = rand(1, 2, 3, block * block * 2)
    check(one_op("DEPTH_TO_SPACE", [x], o), [x])


@pytest.mark.parametrize("block", [2, 3])
def test_space_to_depth(block: int) -> None:
    o = S.SpaceToDepthOptionsT()
    o.blockSize = block
    x = rand(1, 2 * block, 3 * block, 2)
    check(one_op("SPACE_TO_DEPTH", [x], o), [x])


@pytest.mark.parametrize("op", ["DEPTH_TO_SPACE", "SPACE_TO_DEPTH"])
def test_int8(op: str) -> None:
    from tests.op_mappings.tflite.tflite_builder import Quant

    o = S.DepthToSpaceOptionsT() if op == "DEPTH_TO_SPACE" else S.SpaceToDepthOptionsT()
    o.blockSize = 2
    shape, out = ([1, 2, 3, 8], [1, 4, 6, 2]) if op == "DEPTH_TO_SPACE" else (
        [1, 4, 6, 2], [1, 2, 3, 8])
    x = rand(*shape, low=-128, high=127, dtype="int8")
    q = Quant([0.07], [5])
    check(one_op(op, [x], o, quant_in=[q], quant_out=q, out_shape=out, version=2), [x],
          steps=0)
