"""SVDF (inputs: x [B, I], weights_feature [F, I], weights_time [F, M], bias [U]?,
activation_state [B, M·F]; options rank, fused activation) -> gemm + concat + reductions.

LiteRT's float kernel (svdf.cc, EvalFloatSVDF), with F = U·rank filters of memory M:
the state of each filter shifts left by one step and takes x·weights_featureᵀ as its newest
entry; each filter's output is Σ_t state[b, f, t]·weights_time[f, t]; output unit u sums
its `rank` filters, adds the bias and applies the activation (NONE = identity, RELU,
RELU_N1_TO_1, RELU6, TANH). The state is a variable tensor: WebNN graphs are stateless, so
every run starts from its initial value (zeros without a buffer) and the updated state is
not kept (a warning says so).
Restrictions: float input (hybrid models with int8 weights are dequantized at conversion
time, slightly more accurate than LiteRT, which quantizes the input on the fly); the
integer (int8 input, int16 state) kernel has no WebNN equivalent.
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._recurrent import (
    activation_fn,
    check_rank,
    float_input,
    initial_state,
    operand,
    shape_of,
    weight,
)


@tflite_op("SVDF", since=1)
def svdf(ctx: ImportContext, node: Node) -> Outputs:
    """One SVDF step. Restrictions: float or hybrid (int8 weights); stateless: each run
    starts from the state's initial value."""
    b = ctx.builder
    x = float_input(ctx, node, 2)
    batch, n_in = x.shape
    wf, wt = weight(ctx, node, 1), weight(ctx, node, 2)
    if wf is None or wt is None:
        raise InvalidModel("SVDF weights_feature and weights_time are required")
    filters, memory = shape_of(wt)
    check_rank(wf, [filters, n_in], "weights_feature")
    rank = int(node.attrs["rank"])
    if rank < 1 or filters % rank:
        raise InvalidModel(f"SVDF rank {rank} does not divide the {filters} filters")
    units = filters // rank
    bias = weight(ctx, node, 3) if len(node.inputs) > 3 else None
    check_rank(bias, [units], "bias")
    act = activation_fn(node.attrs["fused_activation_function"], none_ok=True)
    state = b.reshape(initial_state(ctx, node, 4, [batch, memory * filters]),
                      [batch, filters, memory])
    newest = b.reshape(b.gemm(x, operand(ctx, wf), b_transpose=True), [batch, filters, 1])
    if memory > 1:
        kept = b.slice(state, [0, 0, 1], [batch, filters, memory - 1])
        state = b.concat([kept, newest], 2)
    else:
        state = newest
    wt_op = b.reshape(operand(ctx, wt), [1, filters, memory])
    per_filter = b.reduce_sum(b.mul(state, wt_op), axes=[2])  # [B, F]
    y = b.reduce_sum(b.reshape(per_filter, [batch, units, rank]), axes=[2])  # [B, U]
    if bias is not None:
        y = b.add(y, operand(ctx, bias))
    return [act(b, y)]
