"""com.microsoft QEmbedLayerNormalization (onnxruntime's quantizer's form of
EmbedLayerNormalization) vs onnxruntime's CPU kernel."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

B, S, H, VOCAB, MAXPOS = 2, 5, 8, 20, 16
RNG = np.random.default_rng(0)
IDS = RNG.integers(0, VOCAB, (B, S)).astype(np.int32)
SEG = RNG.integers(0, 2, (B, S)).astype(np.int32)
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)


def _quantized(x: np.ndarray, qtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    info = np.iinfo(qtype)
    scale = np.float32((x.max() - x.min()) / (info.max - info.min))
    zp = np.clip(np.round(info.min - x.min() / scale), info.min, info.max).astype(qtype)
    q = np.clip(np.round(x / scale) + zp, info.min, info.max).astype(qtype)
    return q, np.array(scale, np.float32), np.array(zp, qtype)


def _items(qtype: str, segment: bool, mask: bool) -> list[tuple[str, np.ndarray | None]]:
    tables = {"word": rng_array(VOCAB, H, seed=1), "pos": rng_array(MAXPOS, H, seed=2),
              "seg": rng_array(2, H, seed=3), "gamma": rng_array(H, seed=4, low=0.5, high=2),
              "beta": rng_array(H, seed=5)}
    q = {k: _quantized(v, qtype) for k, v in tables.items()}
    if not segment:
        q["seg"] = (None, None, None)  # type: ignore[assignment]
    order = ("word", "pos", "seg", "gamma", "beta")
    return ([("ids", IDS), ("seg_ids", SEG if segment else None)]
            + [(f"{k}_q", q[k][0]) for k in order] + [("mask", MASK if mask else None)]
            + [(f"{k}_s", q[k][1]) for k in order] + [(f"{k}_z", q[k][2]) for k in order])


CONSTANTS = tuple(f"{k}_{p}" for k in ("word", "pos", "seg", "gamma", "beta")
                  for p in ("q", "s", "z"))


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("segment", [True, False])
@pytest.mark.parametrize("mask", [True, False])
def test_qembed_layer_norm(qtype: str, segment: bool, mask: bool) -> None:
    check_ms("QEmbedLayerNormalization", _items(qtype, segment, mask), {"epsilon": 1e-5},
             outputs=("y", "mask_index"), constants=CONSTANTS, rtol=1e-4, atol=1e-4)


def test_qembed_layer_norm_computed_tables() -> None:
    """Tables fed at run time: dequantizeLinear in the graph."""
    items = _items("uint8", True, True)
    check_ms("QEmbedLayerNormalization", items, outputs=("y", "mask_index"),
             constants=tuple(c for c in CONSTANTS if not c.endswith("_q")), rtol=1e-4,
             atol=1e-4)


def test_malformed_nodes() -> None:
    items = _items("uint8", True, False)
    items[1] = ("seg_ids", None)
    expect_error(ms_model("QEmbedLayerNormalization", items, outputs=("y", "mask_index"),
                          constants=CONSTANTS),
                 "invalid_model", "segment_ids, segment_embedding and its scale")
