"""The re-fusions into onnxruntime's com.microsoft kernels, for the onnxruntime backend only
(`to_onnx(..., contrib_ops=True)`); the standard ONNX export never asks for them.

Each entry of `FUSIONS` plans its matches over the whole WebNN graph before lowering (one
match may compute several operations' outputs) and emits one node per match; `to_onnx` emits
a match when the first operation it computes is reached (every input of a match is computed
before that) and binds each computed operation to its output. The operations a match
replaces still lower to nodes, which then feed nothing and are removed by
`fusion.remove_dead_nodes`. See each module for what it matches and why that is exact.

- `group_query_attention`: the importer's GroupQueryAttention decomposition (decode /
  chunked prefill over a KV buffer, packed or separate QKV, rotary) -> GroupQueryAttention.
- `attention`: self-attention with a packed QKV projection and an optional end-position key
  mask (the optimizer's fused BERT attention) -> Attention, or QAttention when the projection
  is the importer's quantized QAttention form; float16 too when float16 chains
  are computed in float32 (`float16=True`, see `float16_chains`).
- `recurrent_fusion`: the importer's unrolled GRU / LSTM (HardSigmoid and other ONNX
  activations, peepholes, clip) -> one standard ONNX GRU / LSTM node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from converter.core.webnn.context import MLGraph
from converter.runtimes.onnxruntime.lowering.attention import (
    AttentionMatch,
    emit_attention,
    plan_attention,
)
from converter.runtimes.onnxruntime.lowering.context import Emitter
from converter.runtimes.onnxruntime.lowering.group_query_attention import (
    GqaMatch,
    emit_group_query_attention,
    plan_group_query_attention,
)
from converter.runtimes.onnxruntime.lowering.recurrent_fusion import (
    RecurrentMatch,
    emit_recurrent,
    plan_recurrent,
)

CONTRIB_DOMAIN = "com.microsoft"

#: (plan, match type, emit) per fusion, tried in order; an operation planned by an earlier
#: fusion is left to it.
#: The planner is called as `plan(graph, float16)`; `float16`: float16 chains are computed in
#: float32 (`float16_chains`), so a float16 match may run as a float32 kernel.
FUSIONS: list[tuple[Callable[[MLGraph, bool], dict[int, tuple[Any, int]]], type,
                    Callable[[Emitter, Any], list[str]]]] = [
    (lambda graph, _: plan_group_query_attention(graph), GqaMatch,
     emit_group_query_attention),
    (lambda graph, float16: plan_attention(graph, float16=float16), AttentionMatch,
     emit_attention),
    (lambda graph, _: plan_recurrent(graph), RecurrentMatch, emit_recurrent),
]


def plan_contrib(graph: MLGraph, float16: bool = False) -> dict[int, tuple[Any, int]]:
    """Operation index -> (match, which of the match's outputs it computes), over every
    fusion of `FUSIONS`. A match any of whose operations an earlier fusion planned is
    dropped whole. `float16`: float16 chains are computed in float32 (see `FUSIONS`)."""
    plan: dict[int, tuple[Any, int]] = {}
    for planner, _, _ in FUSIONS:
        found = planner(graph, float16)
        taken = {id(m) for i, (m, _) in found.items() if i in plan}
        plan.update({i: entry for i, entry in found.items() if id(entry[0]) not in taken})
    return plan


def emit_contrib(e: Emitter, match: Any) -> list[str]:
    """The ONNX values of every output of `match`, from the fusion that planned it."""
    for _, kind, emit in FUSIONS:
        if isinstance(match, kind):
            return emit(e, match)
    raise TypeError(f"no contrib fusion emits {type(match).__name__}")
