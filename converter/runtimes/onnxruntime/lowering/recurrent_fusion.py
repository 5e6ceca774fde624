"""The importer's unrolled RNN / GRU / LSTM recurrences, found in a WebNN graph and lowered
back to one ONNX RNN / GRU / LSTM node (onnxruntime's fused kernel), for the onnxruntime
backend only (planned with the `contrib` fusions; these are standard ONNX ops, but the
standard export keeps the WebNN graph's operations).

What is matched is exactly what `op_mappings/onnx/recurrent.py` builds for an ONNX RNN (no
WebNN op) and for a GRU / LSTM that WebNN's gru / lstm cannot express (HardSigmoid and the
other ONNX activations, peepholes read as ONNX reads them, clip), over B rows, H hidden
units, G gates (RNN 1, GRU 3, LSTM 4), T steps, float32 only:

- the input projection of every step: gemm(flat, W, c=bias, bTranspose) with flat [T·B, I],
  W a constant [G·H, I] and bias a constant [G·H] (or none), its T row blocks taken by one
  `split` along axis 0 (GRU: after one split of the columns into [2H, H]); or, both
  directions stacked (a bidirectional node whose directions share activations),
  add(matmul(flat, Wt), bias) with Wt a constant [2, I, G·H] and bias [2, 1, G·H], reshaped
  to [2, T, B, G·H], the backward half reversed in time, transposed to [T, 2, B, G·H] and
  split into T blocks [1, 2, B, G·H];
- per step, lin(s, M, c) = gemm(s, M, c=c, bTranspose) (2-D) or add(matmul(s, Mt), c)
  (stacked, Mt [2, k, n]) with constant M, every gate pre-activation optionally clamped to
  [-clip, clip] and the activations sigmoid, tanh, relu, hardSigmoid, leakyRelu, elu,
  linear (ONNX Affine), softsign, softplus:
  RNN: h' = f(lin(h, R, x));
  GRU: z, r = split(f(lin(h, R_zr, x_zr)), 2); n = g(lin(r·h, R_h, x_h)) (linear_before_reset
  0) or g(x_h + r·lin(h, R_h, Rb_h)) (1); h' = n + z·(h − n), which is ONNX's
  (1 − z)·n + z·h;
  LSTM: i, o, f, c = split(lin(h, R, x), 4) (ONNX's iofc), i = f(i + P_i·C), f = f(f + P_f·C),
  C' = f·C + i·g(c), o = f(o + P_o·C'), h' = o·h(C') (peepholes optional, all three or none);
- the steps chained through h (and C), every step with the same weights, activations and
  clip, walking the blocks 0..T-1 (forward, or stacked: both directions) or T-1..0 (reverse).

The bias recovered is B = [the projection's bias, zeros] (the projection holds Wb + Rb),
except that Rb_h of a linear_before_reset GRU goes to its own place. The ONNX node's outputs
replace: reshape(h_T, [D, B, H]) (Y_h), reshape(C_T, [D, B, H]) (Y_c) and the sequence
reshape(concat(h in time order), [T, 1, B, H]) or, stacked, the concat along axis 1 of its
forward half and its time-reversed backward half (Y). Anything else (input_forget, float16,
non-constant weights or biases, a broken chain, other activations) is left unrolled; the
replaced operations then feed nothing and are removed by `fusion.remove_dead_nodes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from converter.core.webnn.context import MLGraph
from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, constant_value
from converter.runtimes.onnxruntime.lowering.matching import const_of, made_by
from converter.runtimes.onnxruntime.lowering.recurrent_steps import (
    ACTS,
    F32,
    Act,
    Step,
    equal_split,
    gru_step,
    is_f32,
    lstm_step,
    pairs,
    rnn_step,
    same_array,
    split_out,
)


@dataclass(frozen=True)
class Projection:
    """The input projection of every step: flat [T·B, I], W [D, G·H, I], bias [D, G·H]."""

    flat: MLOperand
    weight: np.ndarray
    bias: np.ndarray


@dataclass(frozen=True)
class RecurrentMatch:
    """One matched recurrence: ONNX GRU or LSTM inputs and attributes."""

    kind: str  # "RNN", "GRU" or "LSTM"
    x: MLOperand  # flat [T·B, I]
    steps: int
    batch: int
    hidden: int
    direction: str
    w: np.ndarray
    r: np.ndarray
    b: np.ndarray
    p: np.ndarray | None
    h0: MLOperand
    c0: MLOperand | None
    acts: tuple[Act, ...]
    clip: float | None
    lbr: bool


# -- projection blocks -----------------------------------------------------------------------
def _block(operand: MLOperand) -> tuple[MLOperand, int, int]:
    """(source, index, count): `operand` is block `index` of `count` cut from `source` along
    axis 0 by one split, or (operand, 0, 1)."""
    found = split_out(operand, 0)
    if found is not None and len(found[0].outputs) > 1 and equal_split(
            found[0], len(found[0].outputs)):
        return found[0].args[0], found[1], len(found[0].outputs)
    return operand, 0, 1


def _gemm_projection(proj: MLOperand) -> Projection | None:
    op = made_by(proj, "gemm")
    if op is None:
        return None
    o = op.options
    if (float(o.get("alpha", 1.0)) != 1.0 or float(o.get("beta", 1.0)) != 1.0
            or o.get("aTranspose") or not o.get("bTranspose")):
        return None
    w = const_of(op.args[1])
    flat: MLOperand = op.args[0]
    c = o.get("c")
    bias = np.zeros(proj.shape[-1], np.float32) if c is None else const_of(c)
    if w is None or bias is None or bias.size != proj.shape[-1] or not is_f32(flat):
        return None
    return Projection(flat, w[None].astype(np.float32), bias.reshape(1, -1).astype(np.float32))


def _stacked_projection(source: MLOperand, steps: int, batch: int) -> Projection | None:
    """The projection when `source` is transpose(concat([f, reverse(b, [1])], 0), [1, 0, 2, 3])
    of f, b = split(reshape(add(matmul(flat, Wt), bias), [2, T, B, n]), 2)."""
    tr = made_by(source, "transpose")
    if tr is None or [int(p) for p in tr.options["permutation"]] != [1, 0, 2, 3]:
        return None
    cat = made_by(tr.args[0], "concat")
    if cat is None or int(cat.args[1]) != 0 or len(cat.args[0]) != 2:
        return None
    fwd, rev = cat.args[0]
    rv = made_by(rev, "reverse")
    fs, bs = split_out(fwd, 0), split_out(rv.args[0] if rv is not None else None, 0)
    if (rv is None or [int(a) for a in rv.options.get("axes", [])] != [1] or fs is None
            or bs is None or fs[0] is not bs[0] or (fs[1], bs[1]) != (0, 1)
            or not equal_split(fs[0], 2)):
        return None
    rs = made_by(fs[0].args[0], "reshape")
    if rs is None:
        return None
    n = int(source.shape[-1])
    if tuple(int(d) for d in rs.outputs[0].shape) != (2, steps, batch, n):
        return None
    proj = rs.args[0]
    candidates: list[tuple[object, np.ndarray | None]] = [(proj, np.zeros((2, 1, n)))]
    add = made_by(proj, "add")
    if add is not None:
        candidates = [(a, const_of(c)) for a, c in pairs(add)]
    for mm_out, bias in candidates:
        mm = made_by(mm_out, "matmul")
        if mm is None or bias is None or bias.size != 2 * n:
            continue
        if bias.ndim != 3 or bias.shape != (2, 1, n):
            continue
        flat, wt = mm.args[0], const_of(mm.args[1])
        if wt is None or wt.ndim != 3 or wt.shape[0] != 2 or wt.shape[2] != n or flat.rank != 2:
            continue
        if not is_f32(flat) or flat.shape[0] != steps * batch:
            continue
        return Projection(flat, wt.transpose(0, 2, 1).astype(np.float32),
                          bias.reshape(2, n).astype(np.float32))
    return None


def _column_halves(blocks: Sequence[MLOperand], axis: int, hidden: int) -> MLOperand | None:
    """x when `blocks` are the two outputs of split(x, [2H, H], axis)."""
    cols = [split_out(b, axis) for b in blocks]
    if cols[0] is None or cols[1] is None or cols[0][0] is not cols[1][0]:
        return None
    split = cols[0][0]
    sizes = split.args[1]
    if isinstance(sizes, int | np.integer) or [int(v) for v in sizes] != [2 * hidden, hidden]:
        return None
    if (cols[0][1], cols[1][1]) != (0, 1):
        return None
    whole: MLOperand = split.args[0]
    return whole


def _projection(step: Step, kind: str, stacked: bool, hidden: int
                ) -> tuple[Projection, int, int, int] | None:
    """(projection, block index, steps, batch) of one step's block(s), else None."""
    batch = int(step.h.shape[-2])
    if kind == "GRU" and stacked:  # columns split after the step blocks
        both = _column_halves(step.blocks, 3, hidden)
        if both is None:
            return None
        whole, index, count = _block(both)
    elif kind == "GRU":  # step blocks cut from both column groups
        sources = [_block(b) for b in step.blocks]
        if sources[0][1:] != sources[1][1:]:
            return None
        _, index, count = sources[0]
        cols = _column_halves([s[0] for s in sources], 1, hidden)
        if cols is None:
            return None
        whole = cols
    else:
        whole, index, count = _block(step.blocks[0])
    if stacked:
        proj = _stacked_projection(whole, count, batch)
    else:
        proj = _gemm_projection(whole)
        if proj is not None and proj.flat.shape[0] != count * batch:
            return None
    return None if proj is None else (proj, index, count, batch)


# -- planning --------------------------------------------------------------------------------
def _chains(graph: MLGraph, kind: str, stacked: bool) -> list[list[Step]]:
    """Maximal chains of steps linked through their states, in computation order."""
    matcher = {"GRU": gru_step, "LSTM": lstm_step, "RNN": rnn_step}[kind]
    ends = ACTS if kind == "RNN" else ("add", "mul")
    rank = 4 if stacked else 2
    steps: list[Step] = []
    for op in graph.operations:
        out = op.outputs[0] if op.outputs else None
        if out is None or op.op not in ends or out.rank != rank or not is_f32(out):
            continue
        found = matcher(out, stacked)
        if found is not None:
            steps.append(found)
    by_h = {id(s.h): s for s in steps}
    successors: dict[int, list[Step]] = {}
    for s in steps:
        successors.setdefault(id(s.prev_h), []).append(s)

    def linked(prev: Step | None, s: Step) -> bool:
        return (prev is not None and len(successors.get(id(prev.h), [])) == 1
                and (s.prev_c is None or s.prev_c is prev.c) and _compatible(prev, s))

    chains = []
    for s in steps:
        if linked(by_h.get(id(s.prev_h)), s):
            continue
        chain = [s]
        while True:
            nxt = successors.get(id(chain[-1].h), [])
            if len(nxt) != 1 or not linked(chain[-1], nxt[0]):
                break
            chain.append(nxt[0])
        chains.append(chain)
    return chains


def _compatible(a: Step, b: Step) -> bool:
    return (a.acts == b.acts and a.clip == b.clip and a.lbr == b.lbr
            and all(same_array(x, y) for x, y in zip(a.weights, b.weights, strict=True))
            and same_array(a.rb_h, b.rb_h) and same_array(a.peepholes, b.peepholes))


def _match(chain: list[Step], kind: str, stacked: bool) -> RecurrentMatch | None:
    first = chain[0]
    hidden = int(first.h.shape[-1])
    d = 2 if stacked else 1
    found = [_projection(s, kind, stacked, hidden) for s in chain]
    if any(f is None for f in found):
        return None
    proj = found[0][0]  # type: ignore[index]
    count, batch = found[0][2], found[0][3]  # type: ignore[index]
    if any(f[0] is not proj and not (f[0].flat is proj.flat and same_array(  # type: ignore[index]
            f[0].weight, proj.weight) and same_array(f[0].bias, proj.bias))  # type: ignore[index]
           for f in found):
        return None
    order = [f[1] for f in found]  # type: ignore[index]
    if count != len(chain):
        return None
    if order == list(range(count)):
        direction = "bidirectional" if stacked else "forward"
    elif not stacked and order == list(range(count - 1, -1, -1)):
        direction = "reverse"
    else:
        return None
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    w = proj.weight
    r = np.concatenate(first.weights, axis=1).astype(np.float32)
    if (w.shape[:2] != (d, gates * hidden) or r.shape != (d, gates * hidden, hidden)
            or proj.bias.shape != (d, gates * hidden)):
        return None
    rb = np.zeros((d, gates * hidden), np.float32)
    if first.rb_h is not None:
        if first.rb_h.size != d * hidden:
            return None
        rb[:, 2 * hidden:] = first.rb_h.reshape(d, hidden)
    shape = (1, 2, batch, hidden) if stacked else (batch, hidden)
    if tuple(first.prev_h.shape) != shape or (
            first.prev_c is not None and tuple(first.prev_c.shape) != shape):
        return None
    return RecurrentMatch(kind, proj.flat, count, batch, hidden, direction, w, r,
                          np.concatenate([proj.bias, rb], axis=1), first.peepholes,
                          first.prev_h, first.prev_c, first.acts, first.clip, first.lbr)


def _sequence(operand: MLOperand, hs: Sequence[MLOperand]) -> bool:
    """Whether `operand` is the states `hs` stacked along axis 0 (one concat, or the state
    itself for one step)."""
    cat = made_by(operand, "concat")
    if cat is not None:
        return int(cat.args[1]) == 0 and len(cat.args[0]) == len(hs) and all(
            a is b for a, b in zip(cat.args[0], hs, strict=True))
    return len(hs) == 1 and operand is hs[0]


def _bindings(graph: MLGraph, match: RecurrentMatch, chain: list[Step], stacked: bool
              ) -> dict[int, int]:
    """Operation index -> output slot (0 Y, 1 Y_h, 2 Y_c) of the operations `match`
    computes."""
    d, t, b, h = (2 if stacked else 1), match.steps, match.batch, match.hidden
    hs = [s.h for s in chain]
    if match.direction == "reverse":
        hs.reverse()
    last = chain[-1]
    found: dict[int, int] = {}
    for i, op in enumerate(graph.operations):
        out = op.outputs[0] if op.outputs else None
        if out is None or not is_f32(out):
            continue
        shape = tuple(int(s) for s in out.shape)
        if op.op == "reshape" and shape == (d, b, h):
            if op.args[0] is last.h:
                found[i] = 1
            elif last.c is not None and op.args[0] is last.c:
                found[i] = 2
        elif op.op == "reshape" and not stacked and shape == (t, 1, b, h):
            if _sequence(op.args[0], hs):
                found[i] = 0
        elif op.op == "concat" and stacked and shape == (t, 2, b, h):
            if _bidirectional_sequence(op, hs, t, b, h):
                found[i] = 0
    return found


def _bidirectional_sequence(cat: Operation, hs: Sequence[MLOperand], t: int, b: int,
                            h: int) -> bool:
    """Whether `cat` is concat([f, reverse(k, [0])], 1) of f, k = split(reshape(stacked
    states, [T, 2, B, H]), 2, axis 1)."""
    if int(cat.args[1]) != 1 or len(cat.args[0]) != 2:
        return False
    fwd, rev = cat.args[0]
    rv = made_by(rev, "reverse")
    if rv is None or [int(a) for a in rv.options.get("axes", [])] != [0]:
        return False
    fs, bs = split_out(fwd, 1), split_out(rv.args[0], 1)
    if fs is None or bs is None or fs[0] is not bs[0] or (fs[1], bs[1]) != (0, 1):
        return False
    y = fs[0].args[0]
    rs = made_by(y, "reshape")
    if rs is not None and tuple(int(s) for s in y.shape) == (t, 2, b, h):
        y = rs.args[0]
    return _sequence(y, hs)


def plan_recurrent(graph: MLGraph) -> dict[int, tuple[RecurrentMatch, int]]:
    """The operations whose outputs a matched recurrence computes: (the match, output slot
    0 Y, 1 Y_h, 2 Y_c)."""
    plan: dict[int, tuple[RecurrentMatch, int]] = {}
    for kind in ("RNN", "GRU", "LSTM"):
        for stacked in (False, True):
            for chain in _chains(graph, kind, stacked):
                match = _match(chain, kind, stacked)
                if match is None:
                    continue
                for i, slot in _bindings(graph, match, chain, stacked).items():
                    plan.setdefault(i, (match, slot))
    return plan


# -- emission --------------------------------------------------------------------------------
def _state(e: Emitter, operand: MLOperand | None, shape: list[int]) -> str:
    if operand is None:
        return ""
    value = constant_value(operand)
    if value is not None and not value.any():
        return ""
    return e.reshape(e.input(operand, F32), shape)


def emit_recurrent(e: Emitter, match: RecurrentMatch) -> list[str]:
    """[Y, Y_h] (RNN, GRU) or [Y, Y_h, Y_c] (LSTM) of one ONNX RNN / GRU / LSTM node computing
    `match`."""
    d = 2 if match.direction == "bidirectional" else 1
    state = [d, match.batch, match.hidden]
    x = e.reshape(e.input(match.x, F32), [match.steps, match.batch, int(match.x.shape[1])])
    inputs = [x, e.const(match.w, F32, "W"), e.const(match.r, F32, "R"),
              e.const(match.b, F32, "B"), "", _state(e, match.h0, state)]
    if match.kind == "LSTM":
        inputs.append(_state(e, match.c0, state))
        inputs.append("" if match.p is None else e.const(match.p, F32, "P"))
    while inputs[-1] == "":
        inputs.pop()
    acts = list(match.acts) * d
    alphas = [a for _, a, _ in acts if a is not None]
    betas = [b for _, _, b in acts if b is not None]
    attrs: dict[str, object] = {
        "hidden_size": match.hidden, "direction": match.direction,
        "activations": [name for name, _, _ in acts],
        "activation_alpha": alphas or None, "activation_beta": betas or None,
        "clip": match.clip}
    if match.kind == "GRU":
        attrs["linear_before_reset"] = int(match.lbr)
    outs = e.node_multi(match.kind, inputs, [F32] * (3 if match.kind == "LSTM" else 2),
                        **attrs)
    return outs
