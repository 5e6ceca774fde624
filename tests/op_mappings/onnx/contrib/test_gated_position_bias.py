"""com.microsoft GatedRelativePositionBias (CUDA only) vs float64 numpy written from the
schema's PyTorch formula."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import compare, expect_error, ms_model, rng_array

B, S, N, H, D = 2, 5, 3, 4, 6


def _expected(q: np.ndarray, qb: np.ndarray, rel: np.ndarray, w: np.ndarray, wb: np.ndarray,
              eco: np.ndarray) -> np.ndarray:
    f = [a.astype(np.float64) for a in (q, qb, rel, w, wb, eco)]
    x = (f[0] + f[1]).reshape(B, S, N, H).transpose(0, 2, 1, 3)
    g = (x @ f[3] + f[4]).reshape(B, N, S, 2, D // 2).sum(-1)
    g = 1 / (1 + np.exp(-g))
    gate_u, gate_r = g[..., :1], g[..., 1:]
    return (gate_u * (gate_r * f[5] - 1.0) + 2.0) * f[2]


@pytest.mark.parametrize("rel_batch", [1, B])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gated_relative_position_bias(rel_batch: int, dtype: str) -> None:
    arrays = [rng_array(B, S, N * H, seed=1), rng_array(N * H, seed=2),
              rng_array(rel_batch, N, S, S, seed=3), rng_array(H, D, seed=4, low=-1, high=1),
              rng_array(D, seed=5), rng_array(1, N, 1, 1, seed=6)]
    arrays = [a.astype(dtype) for a in arrays]
    items = list(zip(("q", "qb", "rel", "w", "b", "eco"), arrays, strict=True))
    model = ms_model("GatedRelativePositionBias", items, {"num_heads": N},
                     constants=("qb", "w", "b", "eco"))
    want = _expected(*arrays).astype(dtype)
    tol = (1e-5, 1e-5) if dtype == "float32" else (1e-2, 1e-2)
    compare(model, {"q": arrays[0], "rel": arrays[2]}, {"y": want},
            "GatedRelativePositionBias", *tol)


def test_malformed_nodes() -> None:
    items = [("q", rng_array(B, S, N * H)), ("qb", rng_array(N * H)),
             ("rel", rng_array(1, N, S, S)), ("w", rng_array(H, D + 1)), ("b", rng_array(D)),
             ("eco", rng_array(1, N, 1, 1))]
    expect_error(ms_model("GatedRelativePositionBias", items, {"num_heads": N}),
                 "invalid_model", "with D even")
