"""com.microsoft RotaryEmbedding vs onnxruntime: 3-D and 4-D input, interleaved or not,
position_ids [1] and [B, S] (constant or graph input), partial rotation, malformed nodes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.attention_harness import check_ms, conversion_error
from tests.op_mappings.onnx.harness import rand

B, S, N, H = 2, 4, 3, 8
COS = rand(16, H // 2, seed=1, low=-1, high=1)
SIN = rand(16, H // 2, seed=2, low=-1, high=1)


def _cache(ids: str, rotary_dim: int = H) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos = (np.array([3], np.int64) if ids == "start"
           else np.array([[0, 1, 2, 3], [7, 9, 10, 15]], np.int64))
    return pos, COS[:, :rotary_dim // 2], SIN[:, :rotary_dim // 2]


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("ids", ["start", "per_token"])
@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("const", [True, False])
def test_rotary(interleaved: int, ids: str, rank: int, const: bool) -> None:
    x = rand(B, S, N * H, seed=3) if rank == 3 else rand(B, N, S, H, seed=3)
    pos, cos, sin = _cache(ids)
    check_ms("RotaryEmbedding", [("x", x), ("pos", pos), ("cos", cos), ("sin", sin)],
             {"interleaved": interleaved},
             constants=("pos", "cos", "sin") if const else ("cos", "sin"), atol=1e-5)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("caches", ["const", "input"])
def test_rotary_partial(interleaved: int, caches: str) -> None:
    pos, cos, sin = _cache("per_token", rotary_dim=4)
    x = rand(B, S, N * H, seed=4)
    check_ms("RotaryEmbedding", [("x", x), ("pos", pos), ("cos", cos), ("sin", sin)],
             {"interleaved": interleaved, "num_heads": N, "rotary_embedding_dim": 4},
             constants=("cos", "sin") if caches == "const" else ())


def test_rotary_float16() -> None:
    pos, cos, sin = _cache("per_token")
    check_ms("RotaryEmbedding", [("x", rand(B, N, S, H, seed=5).astype(np.float16)),
                                 ("pos", pos), ("cos", cos.astype(np.float16)),
                                 ("sin", sin.astype(np.float16))], {}, constants=("cos", "sin"),
             rtol=2e-3, atol=2e-3)


def test_rotary_malformed() -> None:
    pos, cos, sin = _cache("per_token")
    x = rand(B, S, N * H, seed=6)
    text = conversion_error("RotaryEmbedding", [("x", x), ("pos", pos), ("cos", cos)], {})
    assert "expects 4 inputs, got 3" in text
    text = conversion_error("RotaryEmbedding", [("x", x), ("pos", pos), ("cos", cos),
                                                ("sin", sin)], {"rotary_embedding_dim": 4})
    assert "num_heads is needed" in text
    text = conversion_error("RotaryEmbedding", [("x", x), ("pos", pos[:, :2]), ("cos", cos),
                                                ("sin", sin)], {})
    assert "position_ids of shape [2, 2]" in text
    text = conversion_error("RotaryEmbedding", [("x", x), ("pos", pos), ("cos", cos),
                                                ("sin", sin)], {"interleaved": 3})
    assert "'interleaved' must be 0 or 1" in text
