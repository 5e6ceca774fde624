"""ONNX RotaryEmbedding (23) vs onnxruntime: 3-D and 4-D input, interleaved or not, with
position_ids (constant or graph input) or per-token caches, partial rotation, malformed
nodes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.attention_harness import check_ms, conversion_error
from tests.op_mappings.onnx.harness import rand

B, S, N, H = 2, 4, 3, 8
POS = np.array([[0, 1, 2, 3], [7, 9, 10, 15]], np.int64)


def _check(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pos: np.ndarray | None,
           attrs: dict[str, int], constants: tuple[str, ...] = ("cos", "sin")) -> None:
    items = [("x", x), ("cos", cos), ("sin", sin)] + ([("pos", pos)] if pos is not None
                                                       else [])
    check_ms("RotaryEmbedding", items, attrs, constants=constants, domain="", opset=23,
             atol=1e-5)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("rotary_dim", [0, 4])
def test_rotary_position_ids(interleaved: int, rank: int, rotary_dim: int) -> None:
    half = (rotary_dim or H) // 2
    x = rand(B, S, N * H, seed=1) if rank == 3 else rand(B, N, S, H, seed=1)
    attrs = {"interleaved": interleaved, "rotary_embedding_dim": rotary_dim}
    if rank == 3:
        attrs["num_heads"] = N
    _check(x, rand(16, half, seed=2, low=-1, high=1), rand(16, half, seed=3, low=-1, high=1),
           POS, attrs)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_per_token_caches_and_graph_inputs(interleaved: int) -> None:
    x = rand(B, N, S, H, seed=4)
    cos, sin = rand(B, S, H // 2, seed=5), rand(B, S, H // 2, seed=6)
    _check(x, cos, sin, None, {"interleaved": interleaved})
    _check(x, cos, sin, None, {"interleaved": interleaved}, constants=())
    _check(x, rand(16, H // 2, seed=7), rand(16, H // 2, seed=8), POS,
           {"interleaved": interleaved}, constants=())


def test_rotary_malformed() -> None:
    x = rand(B, S, N * H, seed=9)
    cos = rand(16, H // 2, seed=10)
    text = conversion_error("RotaryEmbedding", [("x", x), ("c", cos), ("s", cos), ("p", POS)],
                            {}, domain="", opset=23)
    assert "3-D input needs num_heads" in text
    text = conversion_error("RotaryEmbedding", [("x", x), ("c", cos), ("s", cos), ("p", POS)],
                            {"num_heads": N, "rotary_embedding_dim": 6}, domain="", opset=23)
    assert "cos_cache of shape [16, 4] must be [16, 3]" in text
