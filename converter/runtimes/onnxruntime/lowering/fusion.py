"""Graph-level fusions: chains of constant affine operations (planned before lowering) and
redundant Reshapes (removed from the emitted nodes); `remove_dead_nodes` drops the nodes
whose results nothing reads (what is left of operations a `patterns` lowering replaced).

A float32 operation is *affine* when it computes `x·s + t` of one non-constant operand `x`
with constants `s`, `t` that broadcast to `x`'s shape without changing it: add / sub / mul
with a constant operand, div by a constant without zeros, linear, and batchNormalization
whose mean, variance, scale and bias are all constants (or absent). A chain is a sequence of
two or more affine operations, each reading the previous one's result, which nothing else
reads and which is not a graph output (for example batchNormalization → mul → add, as
Caffe2-exported DenseNets have, or sub → div input normalisation).

A chain is emitted as one affine map with `s` and `t` composed at export time in float64 and
rounded once to float32: ONNX BatchNormalization (mean 0, variance 1, epsilon 0, so that
onnxruntime's folding `scale/sqrt(var + ε)` is exact) when the map varies only along axis 1
of a rank ≥ 2 operand, which onnxruntime fuses into a preceding Conv or runs as one blocked
kernel, and Mul + Add otherwise.

`simplify_reshapes` then removes the Reshape round trips that converted graphs are full of
(for example Conv1d layers imported as reshape → conv2d → reshape → relu → reshape): a
Reshape of a Reshape reads the first one's input, a single-input element-wise node reading a
Reshape is moved before it, and a Reshape to the shape its input already has disappears.
These only move data-independent views, so values are unchanged; onnxruntime can then fuse
the Conv with its activation.

Restrictions: only float32 operations (float16 graphs round after every operation, which a
fused chain would not reproduce) and finite constants. The fused chain computes the same
real-number function, but rounds once per emitted node instead of once per WebNN operation
(the result differs from the reference by a few float32 ULP of the intermediate values). A
single affine operation is never fused: it keeps its own exact lowering.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from onnx import NodeProto

from converter.core.webnn.context import MLGraph
from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, constant_value

F32 = "float32"


@dataclass
class AffineChain:
    """`ops` (operation indices, in order) compute `source·scale + shift`; `scale` and
    `shift` are float64 arrays broadcastable to `source.shape` without changing it."""

    source: MLOperand
    scale: np.ndarray
    shift: np.ndarray
    ops: list[int]


def _constant(operand: object) -> np.ndarray | None:
    """The finite float64 value of an operand known at export time, else None."""
    value = constant_value(operand) if isinstance(operand, MLOperand) else None
    if value is None:
        return None
    value = value.astype(np.float64)
    return value if np.isfinite(value).all() else None


def _fits(param: np.ndarray, shape: Sequence[int]) -> bool:
    try:
        return np.broadcast_shapes(param.shape, tuple(shape)) == tuple(shape)
    except ValueError:
        return False


def _float32_param(value: float) -> float:
    return float(np.float32(value))


def affine_form(op: Operation) -> tuple[MLOperand, np.ndarray, np.ndarray] | None:
    """(x, s, t) with `op` computing x·s + t (float64 constants), or None when `op` is not a
    float32 affine operation of one non-constant operand."""
    if not op.outputs or op.outputs[0].data_type != F32:
        return None
    out_shape = op.outputs[0].shape
    one, zero = np.ones(()), np.zeros(())
    if op.op in ("add", "sub", "mul", "div"):
        a, b = op.args
        ca, cb = _constant(a), _constant(b)
        if (ca is None) == (cb is None):
            return None
        x, c = (b, ca) if ca is not None else (a, cb)
        assert c is not None
        if tuple(x.shape) != tuple(out_shape) or not _fits(c, out_shape):
            return None
        if op.op == "add":
            return x, one, c
        if op.op == "mul":
            return x, c, zero
        if op.op == "sub":
            return (x, one, -c) if x is a else (x, -one, c)
        if x is a and (c != 0).all():  # x / c
            return x, 1.0 / c, zero
        return None
    if op.op == "linear":
        x = op.args[0]
        return x, np.asarray(_float32_param(op.options["alpha"])), np.asarray(
            _float32_param(op.options["beta"]))
    if op.op == "batchNormalization":
        x, mean, variance = op.args
        params = [_constant(mean), _constant(variance)]
        for key in ("scale", "bias"):
            if op.options.get(key) is not None:
                params.append(_constant(op.options[key]))
        if any(p is None for p in params):
            return None
        axis = int(op.options["axis"])
        along = [x.shape[axis]] + [1] * (x.rank - axis - 1)
        m, v = params[0], params[1]
        assert m is not None and v is not None
        eps = _float32_param(op.options["epsilon"])
        s = 1.0 / np.sqrt(v + eps)
        if op.options.get("scale") is not None:
            scale = _constant(op.options["scale"])
            assert scale is not None  # every parameter is a constant (checked above)
            s = s * scale
        t = -m * s
        if op.options.get("bias") is not None:
            bias = _constant(op.options["bias"])
            assert bias is not None
            t = t + bias
        if not (np.isfinite(s).all() and np.isfinite(t).all()):
            return None
        return x, s.reshape(along), t.reshape(along)
    return None


def plan_affine_chains(graph: MLGraph) -> dict[int, AffineChain]:
    """The fusable chains of `graph`, keyed by the index of their last operation."""
    uses: Counter[int] = Counter()
    for op in graph.operations:
        for operand in op.operand_inputs():
            uses[id(operand)] += 1
    for operand in graph.outputs.values():
        uses[id(operand)] += 2  # never fuse away a graph output
    open_chains: dict[int, AffineChain] = {}  # id(result operand) -> chain ending there
    chains: dict[int, AffineChain] = {}
    for i, op in enumerate(graph.operations):
        form = affine_form(op)
        if form is None:
            continue
        x, s, t = form
        prev = open_chains.pop(id(x), None)
        if prev is not None and uses[id(x)] == 1:
            chain = AffineChain(prev.source, prev.scale * s, prev.shift * s + t, [*prev.ops, i])
            chains.pop(prev.ops[-1], None)
        else:
            chain = AffineChain(x, s, t, [i])
        open_chains[id(op.outputs[0])] = chain
        if len(chain.ops) >= 2:
            chains[i] = chain
    return chains


def emit_affine(e: Emitter, chain: AffineChain) -> str:
    """The ONNX value of `chain.source·scale + shift` (see the module docstring)."""
    x = chain.source
    rank = x.rank
    scale, shift = np.broadcast_arrays(chain.scale, chain.shift)
    full = scale.reshape((1,) * (rank - scale.ndim) + scale.shape)
    full_shift = shift.reshape(full.shape)
    xv = e.input(x, F32)
    if rank >= 2 and all(n == 1 for k, n in enumerate(full.shape) if k != 1):
        channels = x.shape[1]
        s = np.broadcast_to(full.reshape(-1), (channels,))
        t = np.broadcast_to(full_shift.reshape(-1), (channels,))
        return e.node("BatchNormalization",
                      [xv, e.const(s, F32, "affine_scale"), e.const(t, F32, "affine_shift"),
                       e.const(np.zeros(channels), F32, "zeros"),
                       e.const(np.ones(channels), F32, "ones")], F32, epsilon=0.0)
    y = xv
    if not (scale == 1).all():
        y = e.node("Mul", [y, e.const(scale, F32, "affine_scale")], F32)
    if not (shift == 0).all() or y == xv:
        y = e.node("Add", [y, e.const(shift, F32, "affine_shift")], F32)
    return y


#: Single-input element-wise ONNX ops (same type and shape out as in) that commute with
#: Reshape.
_ELEMENTWISE = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Neg", "Abs", "Exp", "Log",
                "Sqrt", "Erf", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Identity",
                "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Gelu"}


def simplify_reshapes(e: Emitter, keep: set[str]) -> None:
    """Remove redundant Reshapes from `e.nodes` (see the module docstring); values named in
    `keep` (graph inputs and outputs) are never renamed or removed. Linear in the number of
    nodes per pass (node contents are swapped in place, use lists kept up to date)."""
    nodes = e.nodes
    producer: dict[str, NodeProto] = {}
    consumers: dict[str, list[NodeProto]] = defaultdict(list)
    for node in nodes:
        for name in node.output:
            producer[name] = node
        for name in node.input:
            consumers[name].append(node)
    removed: set[int] = set()

    def single_use(name: str) -> bool:
        return name not in keep and len(consumers[name]) == 1

    def replace(users: list[NodeProto], old: NodeProto, new: NodeProto) -> None:
        users[next(i for i, n in enumerate(users) if n is old)] = new

    def rewrite(node: NodeProto) -> list[NodeProto]:
        """Apply one rewrite at `node`; the nodes to look at again."""
        if node.op_type == "Reshape":
            out, inp = node.output[0], node.input[0]
            target = e.shapes.get(out)
            if target is None or 0 in target:  # ONNX Reshape copies input dims for 0
                return []
            src = producer.get(inp)
            if src is not None and src.op_type == "Reshape" and single_use(inp):
                node.input[0] = src.input[0]
                replace(consumers[src.input[0]], src, node)
                consumers[inp] = []
                removed.add(id(src))
                del producer[inp]
                return [node]
            if out not in keep and e.shapes.get(inp) == target:
                users = consumers.pop(out, [])
                for user in users:
                    for k, name in enumerate(user.input):
                        if name == out:
                            user.input[k] = inp
                consumers[inp] = [n for n in consumers[inp] if n is not node] + users
                removed.add(id(node))
                del producer[out]
            return []
        if node.op_type in _ELEMENTWISE and len(node.input) == 1:
            src = producer.get(node.input[0])
            if (src is None or src.op_type != "Reshape" or not single_use(node.input[0])
                    or node.output[0] in keep):
                return []
            a, r, u = src.input[0], src.output[0], node.output[0]
            target = e.shapes.get(r)
            moved = NodeProto()
            moved.CopyFrom(node)
            moved.input[0], moved.output[0] = a, r
            reshape = NodeProto()
            reshape.CopyFrom(src)
            reshape.input[0], reshape.output[0] = r, u
            for name in reshape.input[1:]:
                replace(consumers[name], src, node)
            src.CopyFrom(moved)  # the earlier position now holds the element-wise node
            node.CopyFrom(reshape)
            producer[r], producer[u] = src, node
            for name, shape in ((r, e.shapes.get(a)), (u, target)):
                if shape is None:
                    e.shapes.pop(name, None)
                else:
                    e.shapes[name] = shape
            return [node, src]
        return []

    changed = True
    while changed:
        changed = False
        for node in nodes:
            stack = [node]
            while stack:
                current = stack.pop()
                if id(current) in removed:
                    continue
                again = rewrite(current)
                if again or id(current) in removed:
                    changed = True
                stack.extend(again)
        nodes[:] = [n for n in nodes if id(n) not in removed]
        removed.clear()


def _subgraph_inputs(node: NodeProto) -> set[str]:
    """Every value name the subgraphs (If / Loop / Scan bodies) of `node` read."""
    names: set[str] = set()
    for attr in node.attribute:
        graphs = [attr.g] if attr.HasField("g") else []
        for g in [*graphs, *attr.graphs]:
            for inner in g.node:
                names.update(inner.input)
                names |= _subgraph_inputs(inner)
    return names


def remove_dead_nodes(e: Emitter, keep: set[str]) -> None:
    """Remove from `e.nodes` every node none of whose outputs is read by a remaining node or
    named in `keep` (the graph outputs): what is left of WebNN operations a pattern lowering
    (`patterns`) replaced, and operations whose results nothing uses. ONNX nodes have no side
    effects, and onnxruntime would run them all."""
    live = set(keep)
    kept = []
    for node in reversed(e.nodes):
        if any(name in live for name in node.output):
            kept.append(node)
            live.update(node.input)
            live |= _subgraph_inputs(node)
    kept.reverse()
    e.nodes[:] = kept

