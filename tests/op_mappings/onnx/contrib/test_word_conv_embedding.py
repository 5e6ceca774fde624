"""com.microsoft WordConvEmbedding vs onnxruntime's CPU kernel (words of every length: shorter
than, equal to and longer than the conv window; ids after a 0 pad inside a word)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

SEQ = np.array([[3, 1, 4, 1, 5, 9], [2, 0, 0, 0, 0, 0], [7, 7, 0, 0, 0, 0],
                [1, 2, 3, 4, 5, 6], [5, 0, 3, 0, 0, 0]], np.int32)


@pytest.mark.parametrize("window", [1, 2, 3])
def test_word_conv_embedding(window: int) -> None:
    items = [("s", SEQ), ("w", rng_array(4, 1, window, 5, seed=1)), ("b", rng_array(4, seed=2)),
             ("c", rng_array(10, 5, seed=3))]
    check_ms("WordConvEmbedding", items, {"conv_window_size": window}, constants=("w", "b", "c"),
             rtol=1e-5, atol=1e-6)


def test_malformed_nodes() -> None:
    items = [("s", SEQ), ("w", rng_array(4, 1, 2, 5)), ("b", rng_array(4)),
             ("c", rng_array(10, 5))]
    expect_error(ms_model("WordConvEmbedding", items, {"embedding_size": 3},
                          constants=("w", "b", "c")),
                 "invalid_model", "embedding_size 3 does not match the weights (4)")
