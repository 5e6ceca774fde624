"""One step of the importer's unrolled RNN / GRU / LSTM recurrences, matched backwards from the
hidden state it writes (`gru_step`, `lstm_step`, `rnn_step` -> `Step`), and the small
matchers `recurrent_fusion` also uses. The pattern of a step, and the restrictions (float32,
the ONNX activations of `ACTS`, clip), are described in `recurrent_fusion`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.matching import const_of, made_by

F32 = "float32"

#: WebNN activation -> (ONNX name, option of alpha, option of beta).
ACTS: dict[str, tuple[str, str | None, str | None]] = {
    "sigmoid": ("Sigmoid", None, None), "tanh": ("Tanh", None, None),
    "relu": ("Relu", None, None), "hardSigmoid": ("HardSigmoid", "alpha", "beta"),
    "leakyRelu": ("LeakyRelu", "alpha", None), "elu": ("Elu", "alpha", None),
    "linear": ("Affine", "alpha", "beta"), "softsign": ("Softsign", None, None),
    "softplus": ("Softplus", None, None)}

Act = tuple[str, float | None, float | None]


@dataclass(frozen=True)
class Step:
    """One matched step: the states it reads and writes, the projection block(s) it reads,
    its recurrent weights [D, n, H] per part, activations, clip and GRU extras."""

    prev_h: MLOperand
    prev_c: MLOperand | None
    h: MLOperand
    c: MLOperand | None
    blocks: tuple[MLOperand, ...]
    weights: tuple[np.ndarray, ...]
    rb_h: np.ndarray | None
    peepholes: np.ndarray | None
    acts: tuple[Act, ...]
    clip: float | None
    lbr: bool


# -- small matchers --------------------------------------------------------------------------
def is_f32(operand: MLOperand) -> bool:
    return operand.data_type == F32


def pairs(op: Operation) -> list[tuple[MLOperand, MLOperand]]:
    """Both orders of a binary operation's arguments (add and mul commute exactly)."""
    a, b = op.args[0], op.args[1]
    return [(a, b), (b, a)]


def split_out(operand: object, axis: int) -> tuple[Operation, int] | None:
    """(split, index) when `operand` is an output of a `split` along `axis`."""
    op = made_by(operand, "split")
    if op is None or int(op.options.get("axis", 0)) != axis:
        return None
    assert isinstance(operand, MLOperand)
    index = next(i for i, o in enumerate(op.outputs) if o is operand)
    return op, index


def equal_split(op: Operation, parts: int) -> bool:
    """Whether `split` op cuts its input into `parts` equal parts."""
    spec = op.args[1]
    if isinstance(spec, int | np.integer):
        return int(spec) == parts
    sizes = [int(s) for s in spec]
    return len(sizes) == parts and len(set(sizes)) == 1


def _act(operand: object) -> tuple[Act, MLOperand] | None:
    """((ONNX name, alpha, beta), x) when `operand` is a supported activation of x."""
    if not isinstance(operand, MLOperand) or operand.kind != "output":
        return None
    op = operand.operator
    if op is None or op.op not in ACTS:
        return None
    name, a, b = ACTS[op.op]
    alpha = float(op.options["alpha"]) if a else None
    beta = float(op.options["beta"]) if b else None
    x: MLOperand = op.args[0]
    return (name, alpha, beta), x


def _unclip(operand: MLOperand) -> tuple[MLOperand, float | None]:
    """(x, c) when `operand` is clamp(x, -c, c) with c > 0 finite, else (operand, None)."""
    op = made_by(operand, "clamp")
    if op is None:
        return operand, None
    lo, hi = op.options.get("minValue"), op.options.get("maxValue")
    if lo is None or hi is None or not np.isfinite(hi) or hi <= 0 or float(lo) != -float(hi):
        return operand, None
    x: MLOperand = op.args[0]
    return x, float(hi)


def _lin(operand: object, stacked: bool) -> tuple[MLOperand, np.ndarray, MLOperand | None
                                                   ] | None:
    """(s, M [D, n, k], c) when `operand` is lin(s, M, c) (see the module docstring)."""
    if not stacked:
        op = made_by(operand, "gemm")
        o = op.options if op is not None else {}
        if (op is None or float(o.get("alpha", 1.0)) != 1.0 or float(o.get("beta", 1.0)) != 1.0
                or o.get("aTranspose") or not o.get("bTranspose")):
            return None
        m = const_of(op.args[1])
        s: MLOperand = op.args[0]
        if m is None or m.ndim != 2 or s.rank != 2:
            return None
        return s, m[None], o.get("c")
    add = made_by(operand, "add")
    candidates: list[tuple[object, MLOperand | None]] = [(operand, None)]
    if add is not None:
        candidates = [(a, c) for a, c in pairs(add)]
    for mm_out, c in candidates:
        mm = made_by(mm_out, "matmul")
        if mm is None:
            continue
        s, mt = mm.args[0], const_of(mm.args[1])
        if (mt is None or mt.ndim != 3 or mt.shape[0] != 2 or s.rank != 4
                or tuple(s.shape[:2]) != (1, 2)):
            continue
        return s, mt.transpose(0, 2, 1), c
    return None


def same_array(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a is b or (a.shape == b.shape and bool(np.array_equal(a, b)))


# -- steps -----------------------------------------------------------------------------------
def gru_step(h: MLOperand, stacked: bool) -> Step | None:
    """The GRU step whose new state is `h` (see the module docstring)."""
    add = made_by(h, "add")
    if add is None:
        return None
    axis = h.rank - 1
    for nn, m in pairs(add):
        mul = made_by(m, "mul")
        for z, d in pairs(mul) if mul is not None else []:
            sub = made_by(d, "sub")
            if sub is None or sub.args[1] is not nn:
                continue
            step = _gru_rest(h, sub.args[0], nn, z, axis, stacked)
            if step is not None:
                return step
    return None


def _gru_rest(h: MLOperand, cur: MLOperand, nn: MLOperand, z: MLOperand, axis: int,
              stacked: bool) -> Step | None:
    zs = split_out(z, axis)
    if zs is None or zs[1] != 0 or not equal_split(zs[0], 2):
        return None
    rg = zs[0].outputs[1]
    a0 = _act(zs[0].args[0])
    a1 = _act(nn)
    if a0 is None or a1 is None:
        return None
    pre_zr, clip0 = _unclip(a0[1])
    pre_h, clip1 = _unclip(a1[1])
    if clip0 != clip1:
        return None
    zr = _lin(pre_zr, stacked)
    if zr is None or zr[0] is not cur or zr[2] is None:
        return None
    # linear_before_reset = 1: x_h + r·lin(h, R_h, Rb_h)
    outer = made_by(pre_h, "add")
    for x_h, prod in pairs(outer) if outer is not None else []:
        mul = made_by(prod, "mul")
        for r_, inner in pairs(mul) if mul is not None else []:
            lin = _lin(inner, stacked)
            if r_ is not rg or lin is None or lin[0] is not cur:
                continue
            rb = None if lin[2] is None else const_of(lin[2])
            if lin[2] is not None and rb is None:
                continue
            return Step(cur, None, h, None, (zr[2], x_h), (zr[1], lin[1]), rb, None,
                        (a0[0], a1[0]), clip0, True)
    # linear_before_reset = 0: lin(r·h, R_h, x_h)
    lin = _lin(pre_h, stacked)
    mul = made_by(lin[0], "mul") if lin is not None else None
    if lin is None or mul is None or lin[2] is None:
        return None
    if not any(a is rg and b is cur for a, b in pairs(mul)):
        return None
    return Step(cur, None, h, None, (zr[2], lin[2]), (zr[1], lin[1]), None, None,
                (a0[0], a1[0]), clip0, False)


def _gate(operand: MLOperand, state: MLOperand
          ) -> tuple[Act, MLOperand, np.ndarray | None, float | None] | None:
    """(activation, gate part, peephole or None, clip) of act(clip(part [+ P·state]))."""
    a = _act(operand)
    if a is None:
        return None
    x, clip = _unclip(a[1])
    add = made_by(x, "add")
    for part, prod in pairs(add) if add is not None else []:
        if split_out(part, operand.rank - 1) is None:
            continue
        mul = made_by(prod, "mul")
        for p, s in pairs(mul) if mul is not None else []:
            value = const_of(p)
            if s is state and value is not None:
                return a[0], part, value, clip
    return a[0], x, None, clip


def lstm_step(h: MLOperand, stacked: bool) -> Step | None:
    """The LSTM step whose new hidden state is `h` (see the module docstring)."""
    mul = made_by(h, "mul")
    if mul is None:
        return None
    for o_out, hc in pairs(mul):
        a2 = _act(hc)
        if a2 is None:
            continue
        new_c = a2[1]
        o = _gate(o_out, new_c)
        add = made_by(new_c, "add")
        if o is None or add is None:
            continue
        for fc, ig in pairs(add):
            m1, m2 = made_by(fc, "mul"), made_by(ig, "mul")
            if m1 is None or m2 is None:
                continue
            for f_out, cell in pairs(m1):
                for i_out, g_out in pairs(m2):
                    step = _lstm_rest(h, new_c, cell, o, f_out, i_out, g_out, a2[0], stacked)
                    if step is not None:
                        return step
    return None


def _lstm_rest(h: MLOperand, new_c: MLOperand, cell: MLOperand,
               o: tuple[Act, MLOperand, np.ndarray | None, float | None], f_out: MLOperand,
               i_out: MLOperand, g_out: MLOperand, a2: Act, stacked: bool) -> Step | None:
    i, f = _gate(i_out, cell), _gate(f_out, cell)
    g = _act(g_out)
    if i is None or f is None or g is None:
        return None
    g_part, g_clip = _unclip(g[1])
    if not (i[0] == f[0] == o[0]) or not (i[3] == f[3] == o[3] == g_clip):
        return None
    parts = [split_out(x, h.rank - 1) for x in (i[1], o[1], f[1], g_part)]
    if any(p is None for p in parts):
        return None
    split = parts[0][0]  # type: ignore[index]
    if ([p[1] for p in parts] != [0, 1, 2, 3]  # type: ignore[index]
            or any(p[0] is not split for p in parts)  # type: ignore[index]
            or not equal_split(split, 4)):
        return None
    lin = _lin(split.args[0], stacked)
    if lin is None or lin[2] is None:
        return None
    peeps = [i[2], o[2], f[2]]
    if any(p is None for p in peeps) and any(p is not None for p in peeps):
        return None
    hidden = h.shape[-1]
    peep = None
    if peeps[0] is not None:
        d = 2 if stacked else 1
        try:
            peep = np.concatenate([np.broadcast_to(p, (d, 1, hidden)).reshape(d, hidden)
                                   for p in peeps if p is not None], axis=1)
        except ValueError:
            return None
        if any(np.asarray(p).size != d * hidden for p in peeps if p is not None):
            return None
    return Step(lin[0], cell, h, new_c, (lin[2],), (lin[1],), None, peep,
                (i[0], g[0], a2), i[3], False)


def rnn_step(h: MLOperand, stacked: bool) -> Step | None:
    """The RNN step whose new state is `h` = f(clip(lin(h_prev, R, x)))."""
    a = _act(h)
    if a is None:
        return None
    pre, clip = _unclip(a[1])
    lin = _lin(pre, stacked)
    if lin is None or lin[2] is None:
        return None
    return Step(lin[0], None, h, None, (lin[2],), (lin[1],), None, None, (a[0],), clip, False)
