"""onnxruntime's MatMulNBits decode fusions (com.microsoft MatMulNBitsMlp, MatMulNBitsQkv) ->
the RMS norm + MatMulNBits mappings they fuse.

- MatMulNBitsMlp: A_norm = A, SimplifiedLayerNormalization(A, norm_scale) or
  SkipSimplifiedLayerNormalization(A, skip, norm_scale) (epsilon); gate = MatMulNBits(A_norm,
  gate_B, gate_scales) + gate_bias, up likewise; Y = activation(gate) · up (activation silu /
  swish: x·sigmoid(x), gelu: the erf form). Output 1 is the skip norm's input + skip sum.
- MatMulNBitsQkv: the same norm (norm_scale required), then Q, K, V = MatMulNBits(A_norm, *_B,
  *_scales) + *_bias (N = Nq, Nkv, Nkv); output 3 the input + skip sum.
Each part is the existing SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization /
MatMulNBits mapping (their restrictions apply; no zero points, as the fused schemas have none).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_float, attr_int, attr_str, check_arity
from op_mappings.onnx.contrib.matmul_nbits import matmul_nbits
from op_mappings.onnx.contrib.normalization import (
    simplified_layer_normalization,
    skip_simplified_layer_normalization,
)

MS = "com.microsoft"


def _normalized(ctx: ImportContext, node: Node, required: bool) -> tuple[str, Any]:
    """(name of A_norm's value, the input + skip sum or None); A_norm is registered under a
    node-private name, which the caller removes."""
    a, skip, scale = node.inputs[0], node.input(1), node.input(2)
    if not scale:
        if required or skip:
            raise InvalidModel(f"{node.op_type} needs norm_scale"
                               f"{' with skip' if skip else ''}")
        return a, None
    eps = attr_float(node, "epsilon", 1e-6 if node.op_type == "MatMulNBitsQkv" else 1e-5)
    if skip:
        norm = replace(node, op_type="SkipSimplifiedLayerNormalization",
                       inputs=(a, skip, scale), outputs=("y", "", "", "sum"),
                       attrs={"epsilon": eps})
        y, _, _, total = skip_simplified_layer_normalization(ctx, norm)
        return _keep(ctx, node, y), total
    norm = replace(node, op_type="SimplifiedLayerNormalization", domain="",
                   inputs=(a, scale), outputs=("y",), attrs={"epsilon": eps, "axis": -1,
                                                             "stash_type": 1})
    return _keep(ctx, node, simplified_layer_normalization(ctx, norm)[0]), None


def _keep(ctx: ImportContext, node: Node, operand: Any) -> str:
    key = f"{node.name}\x00normalized"
    ctx.operands[key] = operand
    return key


def _project(ctx: ImportContext, node: Node, a_name: str, first: int, n: int) -> Any:
    """MatMulNBits(A_norm, inputs first (B), first + 1 (scales)) + input first + 2 (bias)."""
    attrs = {"K": attr_int(node, "K", None), "N": n, "bits": attr_int(node, "bits", 4),
             "block_size": attr_int(node, "block_size", None)}
    mm = replace(node, op_type="MatMulNBits",
                 inputs=(a_name, node.inputs[first], node.inputs[first + 1], "", "",
                         node.input(first + 2)), outputs=("y",), attrs=attrs)
    return matmul_nbits(ctx, mm)[0]


@onnx_op("MatMulNBitsMlp", since=1, domain=MS, const_inputs=(3, 6))
def matmul_nbits_mlp(ctx: ImportContext, node: Node) -> Outputs:
    """activation(gate) · up over the (optionally RMS-normalised) input (see the module
    docstring). Restrictions: those of MatMulNBits and the norms; activation silu, swish or
    gelu."""
    check_arity(node, (8, 9), (1, 2), required=(0, 3, 4, 6, 7))
    act = attr_str(node, "activation", None)
    if act not in ("silu", "swish", "gelu"):
        raise UnsupportedAttribute(f"MatMulNBitsMlp activation {act!r} is not silu, swish or "
                                   "gelu")
    b = ctx.builder
    a_name, total = _normalized(ctx, node, False)
    try:
        n = attr_int(node, "N", None)
        gate = _project(ctx, node, a_name, 3, n)
        up = _project(ctx, node, a_name, 6, n)
    finally:
        ctx.operands.pop(f"{node.name}\x00normalized", None)
    gated = b.gelu(gate) if act == "gelu" else b.mul(gate, b.sigmoid(gate))
    outs: list[Any] = [b.mul(gated, up)]
    if len(node.outputs) > 1:
        if node.outputs[1] and total is None:
            raise InvalidModel("MatMulNBitsMlp input_skip_bias_sum needs skip")
        outs.append(total if node.outputs[1] else None)
    return outs


@onnx_op("MatMulNBitsQkv", since=1, domain=MS, const_inputs=(3, 6, 9))
def matmul_nbits_qkv(ctx: ImportContext, node: Node) -> Outputs:
    """Q, K, V projections of the RMS-normalised input (see the module docstring).
    Restrictions: those of MatMulNBits and the norms."""
    check_arity(node, (11, 12), (3, 4), required=(0, 2, 3, 4, 6, 7, 9, 10))
    a_name, total = _normalized(ctx, node, True)
    try:
        nq, nkv = attr_int(node, "Nq", None), attr_int(node, "Nkv", None)
        outs: list[Any] = [_project(ctx, node, a_name, 3, nq),
                           _project(ctx, node, a_name, 6, nkv),
                           _project(ctx, node, a_name, 9, nkv)]
    finally:
        ctx.operands.pop(f"{node.name}\x00normalized", None)
    if len(node.outputs) > 3:
        if node.outputs[3] and total is None:
            raise InvalidModel("MatMulNBitsQkv input_skip_bias_sum needs skip")
        outs.append(total if node.outputs[3] else None)
    return outs
