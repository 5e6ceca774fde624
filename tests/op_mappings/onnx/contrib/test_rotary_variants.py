"""com.microsoft MRotaryEmbedding vs onnxruntime's CPU kernel and GemmaRotaryEmbedding (CUDA
only) vs the schema's standard-op graph in onnxruntime."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

B, S, N, H, MAXPOS = 2, 5, 2, 16, 12
RNG = np.random.default_rng(0)
POS = RNG.integers(0, MAXPOS, (3, B, S)).astype(np.int64)
ANGLES = RNG.uniform(0, 6, (MAXPOS, H // 2))
COS, SIN = np.cos(ANGLES).astype(np.float32), np.sin(ANGLES).astype(np.float32)


@pytest.mark.parametrize("layout,sections", [(0, [2, 3, 3]), (1, [2, 3, 3]), (0, [8, 0, 0]),
                                             (1, [4, 2, 2])])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("const_positions", [True, False])
def test_m_rotary_embedding(layout: int, sections: list[int], interleaved: int, rank: int,
                            const_positions: bool) -> None:
    x = rng_array(B, S, N * H, seed=1) if rank == 3 else rng_array(B, N, S, H, seed=1)
    attrs = {"mrope_section": sections, "mrope_layout": layout, "interleaved": interleaved}
    if rank == 3:
        attrs["num_heads"] = N
    check_ms("MRotaryEmbedding", [("x", x), ("p", POS), ("c", COS), ("s", SIN)], attrs,
             constants=("c", "s", "p") if const_positions else ("c", "s"), rtol=1e-5,
             atol=1e-5)


def test_m_rotary_partial() -> None:
    """rotary_embedding_dim below the head size: the tail is left alone."""
    x = rng_array(B, S, N * 2 * H, seed=2)
    attrs = {"mrope_section": [2, 3, 3], "num_heads": N, "rotary_embedding_dim": H}
    check_ms("MRotaryEmbedding", [("x", x), ("p", POS), ("c", COS), ("s", SIN)], attrs,
             constants=("c", "s"), rtol=1e-5, atol=1e-5)


def _gemma_reference(ins: list[str], outs: list[str]) -> list[Any]:
    """The schema's onnxscript (CUDA-only op): Sin/Cos, Cast to float16, Unsqueeze, Mul, Add."""
    e, q, qr, k, kr = ins
    axes = helper.make_node("Constant", [], ["ax"], value=helper.make_tensor(
        "ax", TensorProto.INT64, [1], [1]))
    nodes = [axes]
    for fn in ("Sin", "Cos"):
        nodes += [helper.make_node(fn, [e], [fn]),
                  helper.make_node("Cast", [fn], [fn + "16"], to=TensorProto.FLOAT16),
                  helper.make_node("Unsqueeze", [fn + "16", "ax"], [fn + "4"])]
    for x, xr, out in ((q, qr, outs[0]), (k, kr, outs[1])):
        nodes += [helper.make_node("Mul", [x, "Cos4"], [x + "c"]),
                  helper.make_node("Mul", [xr, "Sin4"], [xr + "s"]),
                  helper.make_node("Add", [x + "c", xr + "s"], [out])]
    return nodes


def test_gemma_rotary_embedding() -> None:
    emb = rng_array(B, S, H, seed=3, low=0, high=6)
    qk = [(name, rng_array(B, N, S, H, seed=4 + i).astype(np.float16))
          for i, name in enumerate(("q", "qr", "k", "kr"))]
    check_ms("GemmaRotaryEmbedding", [("e", emb), *qk], outputs=("y1", "y2"),
             reference=_gemma_reference, rtol=2e-3, atol=2e-3)


def test_malformed_nodes() -> None:
    x = rng_array(B, S, N * H)
    expect_error(ms_model("MRotaryEmbedding", [("x", x), ("p", POS), ("c", COS), ("s", SIN)],
                          {"mrope_section": [2, 2, 2], "num_heads": N}, constants=("c", "s")),
                 "invalid_model", "mrope_section [2, 2, 2] must be three values summing to 8")
