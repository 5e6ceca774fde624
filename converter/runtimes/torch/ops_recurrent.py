"""Torch implementations: gru, gruCell, lstm, lstmCell (mirrors the reference
kernels/recurrent.py: the spec's gruCell/lstmCell emulation).

Computed in float32 (float16 inputs too, also on CUDA). Loops run over directions and time steps
only; the input products of all steps are one matmul per direction. Missing biases,
peepholes and initial states are zeros. Gate offsets along the 3H/4H axis: gru "zrn" z 0,
r H, n 2H; "rzn" r 0, z H, n 2H; lstm "iofg" i 0, o H, f 2H, g 3H; "ifgo" i 0, f H, g 2H,
o 3H; peepholes are always packed i, o, f. The lstm output-gate peephole reads the incoming
cell state (as the spec emulation does).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from converter.runtimes.torch.registry import Fn, Node, impl

Activation = Callable[[torch.Tensor], torch.Tensor]

ACTIVATIONS: dict[str, Activation] = {
    "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
}
GRU_OFFSETS = {"zrn": {"z": 0, "r": 1, "n": 2}, "rzn": {"r": 0, "z": 1, "n": 2}}
LSTM_OFFSETS = {"iofg": {"i": 0, "o": 1, "f": 2, "g": 3},
                "ifgo": {"i": 0, "f": 1, "g": 2, "o": 3}}
PEEPHOLE_OFFSETS = {"i": 0, "o": 1, "f": 2}


def _gate(a: torch.Tensor, offset: int, h: int) -> torch.Tensor:
    return a[..., offset * h:(offset + 1) * h]


def gru_step(xw: torch.Tensor, hidden: torch.Tensor, r_weight: torch.Tensor,
             bias: torch.Tensor | None, r_bias: torch.Tensor | None, h: int, layout: str,
             reset_after: bool, acts: list[Activation]) -> torch.Tensor:
    """One GRU step. xw = x @ Wᵀ [B, 3H]; r_weight [3H, H]; biases [3H] or None."""
    off = GRU_OFFSETS[layout]
    f, g = acts
    xb = xw if bias is None else xw + bias
    rt = r_weight.t()  # [H, 3H]

    def rec(name: str, state: torch.Tensor) -> torch.Tensor:
        return state @ _gate(rt, off[name], h)

    def rb(name: str) -> torch.Tensor | float:
        return 0.0 if r_bias is None else _gate(r_bias, off[name], h)

    z = f(_gate(xb, off["z"], h) + rec("z", hidden) + rb("z"))
    r = f(_gate(xb, off["r"], h) + rec("r", hidden) + rb("r"))
    if reset_after:
        n = g(_gate(xb, off["n"], h) + r * (rec("n", hidden) + rb("n")))
    else:
        n = g(_gate(xb, off["n"], h) + rb("n") + rec("n", r * hidden))
    return z * hidden + (1.0 - z) * n


def lstm_step(xw: torch.Tensor, hidden: torch.Tensor, cell: torch.Tensor,
              r_weight: torch.Tensor, bias: torch.Tensor | None, peephole: torch.Tensor | None,
              h: int, layout: str, acts: list[Activation]) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM step. xw = x @ Wᵀ [B, 4H]; r_weight [4H, H]; bias = bias + recurrentBias
    [4H] or None; peephole [3H] or None."""
    off = LSTM_OFFSETS[layout]
    f_act, g_act, h_act = acts
    pre = xw + hidden @ r_weight.t()
    if bias is not None:
        pre = pre + bias

    def gate(name: str) -> torch.Tensor:
        v = _gate(pre, off[name], h)
        if peephole is not None and name in PEEPHOLE_OFFSETS:
            v = v + _gate(peephole, PEEPHOLE_OFFSETS[name], h) * cell
        return v

    i = f_act(gate("i"))
    f = f_act(gate("f"))
    g = g_act(_gate(pre, off["g"], h))
    o = f_act(gate("o"))
    new_cell = f * cell + i * g
    return o * h_act(new_cell), new_cell


def _acts(node: Node) -> list[Activation]:
    return [ACTIVATIONS[a] for a in node.options["activations"]]


def _sum_bias(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    if a is None:
        return b
    return a if b is None else a + b


@impl("gruCell")
def gru_cell(node: Node) -> Fn:
    h, fl, acts = int(node.op.args[4]), node.acc, _acts(node)
    layout, reset_after = node.options["layout"], bool(node.options["resetAfter"])
    b_pos, rb_pos = node.opt("bias"), node.opt("recurrentBias")

    def fn(*t: torch.Tensor) -> list[torch.Tensor]:
        x, w, r, hs = (fl(v) for v in t[:4])
        bias = None if b_pos is None else fl(t[b_pos])
        r_bias = None if rb_pos is None else fl(t[rb_pos])
        return [gru_step(x @ w.t(), hs, r, bias, r_bias, h, layout, reset_after, acts)]

    return fn


@impl("lstmCell")
def lstm_cell(node: Node) -> Fn:
    h, fl, acts = int(node.op.args[5]), node.acc, _acts(node)
    layout = node.options["layout"]
    b_pos, rb_pos = node.opt("bias"), node.opt("recurrentBias")
    p_pos = node.opt("peepholeWeight")

    def fn(*t: torch.Tensor) -> list[torch.Tensor]:
        x, w, r, hs, cs = (fl(v) for v in t[:5])
        bias = _sum_bias(None if b_pos is None else fl(t[b_pos]),
                         None if rb_pos is None else fl(t[rb_pos]))
        peep = None if p_pos is None else fl(t[p_pos])
        hidden, cell = lstm_step(x @ w.t(), hs, cs, r, bias, peep, h, layout, acts)
        return [hidden, cell]

    return fn


def _step_order(steps: int, direction: str, d: int) -> range:
    """Time indices walked by direction index d (reverse for backward and d = 1 of both)."""
    reverse = direction == "backward" or d == 1
    return range(steps - 1, -1, -1) if reverse else range(steps)


@impl("gru")
def gru(node: Node) -> Fn:
    steps, h = int(node.op.args[3]), int(node.op.args[4])
    fl, acts, o = node.acc, _acts(node), node.options
    dirs = node.operand(1).shape[0]
    batch = node.operand(0).shape[1]
    layout, reset_after = o["layout"], bool(o["resetAfter"])
    direction, sequence_out = o["direction"], bool(o["returnSequence"])
    b_pos, rb_pos = node.opt("bias"), node.opt("recurrentBias")
    h0_pos = node.opt("initialHiddenState")
    dtype = torch.float32
    device = node.ctx.device

    def fn(*t: torch.Tensor) -> list[torch.Tensor]:
        x, w, r = (fl(v) for v in t[:3])
        hiddens, sequences = [], []
        for d in range(dirs):
            xw = x @ w[d].t()  # [steps, B, 3H]
            bias = None if b_pos is None else fl(t[b_pos])[d]
            r_bias = None if rb_pos is None else fl(t[rb_pos])[d]
            cur = (torch.zeros((batch, h), dtype=dtype, device=device) if h0_pos is None
                   else fl(t[h0_pos])[d])
            seq: list[torch.Tensor | None] = [None] * steps
            for s in _step_order(steps, direction, d):
                cur = gru_step(xw[s], cur, r[d], bias, r_bias, h, layout, reset_after, acts)
                seq[s] = cur
            hiddens.append(cur)
            sequences.append(torch.stack(seq))
        out = [torch.stack(hiddens)]
        return out + [torch.stack(sequences, dim=1)] if sequence_out else out

    return fn


@impl("lstm")
def lstm(node: Node) -> Fn:
    steps, h = int(node.op.args[3]), int(node.op.args[4])
    fl, acts, o = node.acc, _acts(node), node.options
    dirs = node.operand(1).shape[0]
    batch = node.operand(0).shape[1]
    layout, direction = o["layout"], o["direction"]
    sequence_out = bool(o["returnSequence"])
    b_pos, rb_pos = node.opt("bias"), node.opt("recurrentBias")
    p_pos = node.opt("peepholeWeight")
    h0_pos, c0_pos = node.opt("initialHiddenState"), node.opt("initialCellState")
    dtype = torch.float32
    device = node.ctx.device

    def fn(*t: torch.Tensor) -> list[torch.Tensor]:
        x, w, r = (fl(v) for v in t[:3])
        hiddens, cells, sequences = [], [], []
        for d in range(dirs):
            xw = x @ w[d].t()  # [steps, B, 4H]
            bias = _sum_bias(None if b_pos is None else fl(t[b_pos])[d],
                             None if rb_pos is None else fl(t[rb_pos])[d])
            peep = None if p_pos is None else fl(t[p_pos])[d]
            zeros = torch.zeros((batch, h), dtype=dtype, device=device)
            cur_h = zeros if h0_pos is None else fl(t[h0_pos])[d]
            cur_c = zeros if c0_pos is None else fl(t[c0_pos])[d]
            seq: list[torch.Tensor | None] = [None] * steps
            for s in _step_order(steps, direction, d):
                cur_h, cur_c = lstm_step(xw[s], cur_h, cur_c, r[d], bias, peep, h, layout,
                                         acts)
                seq[s] = cur_h
            hiddens.append(cur_h)
            cells.append(cur_c)
            sequences.append(torch.stack(seq))
        out = [torch.stack(hiddens), torch.stack(cells)]
        return out + [torch.stack(sequences, dim=1)] if sequence_out else out

    return fn
