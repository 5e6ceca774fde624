"""com.microsoft SparseAttention vs onnxruntime's CPU kernel, run through an IOBinding that
gives past and present one buffer (the kernel requires it): prompts and decode steps, grouped
KV heads, several layouts, packed QKV, rotary, key_total_sequence_lengths as a graph input."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

from tests.op_mappings.onnx.contrib.oracle import compare, expect_error, ms_model, rng_array

N, KV, H, M, BLOCK = 4, 2, 8, 16, 4
# the schema's example: 2 layouts of 4 x 4 blocks
ROWS = np.array([[0, 1, 3, 5, 8], [0, 1, 3, 6, 9]], np.int32)
COLS = np.array([[0, 0, 1, 1, 2, 1, 2, 3, -1], [0, 0, 1, 0, 1, 2, 0, 2, 3]], np.int32)


def _run_ort(model: Any, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    shared = {}
    held = {name: np.ascontiguousarray(arr).copy() for name, arr in feeds.items()}
    for name, arr in held.items():  # the OrtValues wrap these arrays: they must stay alive
        value = ort.OrtValue.ortvalue_from_numpy(arr)
        binding.bind_ortvalue_input(name, value)
        shared[name] = value
    binding.bind_output("y")
    binding.bind_ortvalue_output("pk_out", shared["pk"])
    binding.bind_ortvalue_output("pv_out", shared["pv"])
    session.run_with_iobinding(binding)
    y = binding.copy_outputs_to_cpu()[0]
    return {"y": y, "pk_out": held["pk"].copy(), "pv_out": held["pv"].copy()}


def _case(bsz: int, seq: int, lengths: list[int], *, packed: bool = False,
          rotary: bool = False, const_lengths: bool = True, rows: np.ndarray = ROWS,
          cols: np.ndarray = COLS, head: int = H) -> None:
    total = max(lengths)
    past = np.zeros((bsz, KV, M, head), np.float32)
    past_v = np.zeros((bsz, KV, M, head), np.float32)
    for i, n in enumerate(lengths):  # the past rows of each batch row are filled
        filled = n - seq
        past[i, :, :filled] = rng_array(KV, filled, head, seed=10 + i) if filled else 0
        past_v[i, :, :filled] = rng_array(KV, filled, head, seed=20 + i) if filled else 0
    q = rng_array(bsz, seq, N * head, seed=1, low=-1, high=1)
    k = rng_array(bsz, seq, KV * head, seed=2, low=-1, high=1)
    v = rng_array(bsz, seq, KV * head, seed=3)
    qkv: list[tuple[str, np.ndarray | None]] = (
        [("q", np.concatenate([q, k, v], axis=2)), ("k", None), ("v", None)] if packed
        else [("q", q), ("k", k), ("v", v)])
    items = qkv + [("pk", past), ("pv", past_v), ("rows", rows), ("cols", cols),
                   ("total", np.array([total], np.int32)),
                   ("lengths", np.array(lengths, np.int32))]
    attrs: dict[str, Any] = {"num_heads": N, "kv_num_heads": KV, "sparse_block_size": BLOCK}
    if rotary:
        angles = np.random.default_rng(5).uniform(0, 6, (M, head // 2))
        items += [("cos", np.cos(angles).astype(np.float32)),
                  ("sin", np.sin(angles).astype(np.float32))]
        attrs["do_rotary"] = 1
    consts = ["rows", "cols", "total"] + (["lengths"] if const_lengths else []) + \
        (["cos", "sin"] if rotary else [])
    model = ms_model("SparseAttention", items, attrs, outputs=("y", "pk_out", "pv_out"),
                     constants=consts)
    feeds = {n: a for n, a in items if a is not None and n not in consts}
    expected = _run_ort(model, feeds)
    compare(model, feeds, expected, "SparseAttention", 1e-4, 1e-5)


@pytest.mark.parametrize("packed", [False, True])
def test_prompt(packed: bool) -> None:
    _case(2, 16, [16, 16], packed=packed)


@pytest.mark.parametrize("lengths", [[9, 9], [13, 13], [16, 16], [1, 1]])
def test_decode(lengths: list[int]) -> None:
    _case(2, 1, lengths)


def test_decode_lengths_graph_input() -> None:
    _case(2, 1, [11, 11], const_lengths=False)


@pytest.mark.parametrize("seq,lengths", [(16, [16]), (1, [11])])
def test_rotary(seq: int, lengths: list[int]) -> None:
    _case(1, seq, lengths, rotary=True, head=16)  # onnxruntime's rotary needs head % 16 == 0


def test_one_layout() -> None:
    _case(1, 16, [16], rows=ROWS[:1], cols=COLS[:1])


def test_malformed_nodes() -> None:
    items = [("q", rng_array(1, 4, N * H)), ("k", rng_array(1, 4, KV * H)),
             ("v", rng_array(1, 4, KV * H)), ("pk", rng_array(1, KV, M, H)),
             ("pv", rng_array(1, KV, M, H)), ("rows", ROWS[:, :3]), ("cols", COLS[:1]),
             ("total", np.array([4], np.int32)), ("lengths", np.array([4], np.int32))]
    expect_error(ms_model("SparseAttention", items, {"num_heads": N, "kv_num_heads": KV,
                                                     "sparse_block_size": BLOCK},
                          outputs=("y", "pk_out", "pv_out"),
                          constants=("rows", "cols", "total")),
                 "invalid_model", "must be [L, blocks + 1] and [L, nnz]")
