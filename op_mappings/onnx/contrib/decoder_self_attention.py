"""com.microsoft DecoderMaskedSelfAttention (GPT-2 style decoding with onnxruntime's
BeamSearch conversion) -> the packed QKV projection + DecoderMaskedMultiHeadAttention.

DecoderMaskedSelfAttention is Attention's projection (input [B, 1, D_in] · weights
[D_in, 3D], bias [3D]) followed by one decoding step over a shared KV buffer: past and
present are one [2, B, N, max_sequence_length, H] tensor (keys, then values). The handler
projects, splits the buffer into its key and value halves, runs DecoderMaskedMultiHeadAttention
(packed QKV query, same mask_index / attention_bias / past_sequence_length / beam_width /
cache_indirection / scale / mask_filter_value) and stacks the two present halves again.
"""

from __future__ import annotations

from dataclasses import replace

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import check_arity, check_same_type, float_operand
from op_mappings.onnx.contrib.attention import decoder_masked_multi_head_attention

MS = "com.microsoft"


@onnx_op("DecoderMaskedSelfAttention", since=1, domain=MS)
def decoder_masked_self_attention(ctx: ImportContext, node: Node) -> Outputs:
    """input · weights, then DecoderMaskedMultiHeadAttention over the [2, B, N, M, H] buffer
    (see the module docstring). Restrictions: those of DecoderMaskedMultiHeadAttention's
    self-attention (past_present_share_buffer=1, beam_width absent or 1); no do_rotary;
    equal Q, K and V hidden sizes (no qkv_hidden_sizes)."""
    check_arity(node, (7, 9), (1, 2), required=(0, 1, 2, 4, 6))
    if node.attrs.get("do_rotary", 0):
        raise UnsupportedAttribute("DecoderMaskedSelfAttention do_rotary=1 is not supported")
    if "qkv_hidden_sizes" in node.attrs:
        raise UnsupportedAttribute("DecoderMaskedSelfAttention qkv_hidden_sizes is not "
                                   "supported")
    b = ctx.builder
    x = float_operand(ctx, node, 0, "input")
    w = float_operand(ctx, node, 1, "weights")
    past = float_operand(ctx, node, 4, "past")
    check_same_type(node, [(x, "input"), (w, "weights"), (past, "past")])
    if x.rank != 3 or x.shape[1] != 1 or w.rank != 2 or w.shape[0] != x.shape[2] \
            or w.shape[1] % 3:
        raise InvalidModel(f"DecoderMaskedSelfAttention input {list(x.shape)} and weights "
                           f"{list(w.shape)} must be [B, 1, D_in] and [D_in, 3·D]")
    if past.rank != 5 or past.shape[0] != 2:
        raise InvalidModel(f"DecoderMaskedSelfAttention past {list(past.shape)} must be "
                           "[2, B, N, max_sequence_length, H]")
    shape = list(past.shape[1:])
    qkv = b.matmul(x, w)
    halves = [b.reshape(b.slice(past, [i, 0, 0, 0, 0], [1, *shape]), shape) for i in (0, 1)]
    keys = [f"{node.name}\x00{what}" for what in ("qkv", "past_key", "past_value")]
    operands: list[MLOperand] = [qkv, *halves]
    for key, operand in zip(keys, operands, strict=True):
        ctx.operands[key] = operand
    try:
        inputs = (keys[0], "", "", node.input(3), node.input(5), keys[1], keys[2],
                  node.inputs[6], node.input(7), node.input(8), node.inputs[2])
        attrs = {k: v for k, v in node.attrs.items() if k != "do_rotary"}
        mha = replace(node, op_type="DecoderMaskedMultiHeadAttention", inputs=inputs,
                      outputs=(node.outputs[0], "present_key", "present_value"), attrs=attrs)
        out, present_k, present_v = decoder_masked_multi_head_attention(ctx, mha)[:3]
    finally:
        for key in keys:
            del ctx.operands[key]
    if len(node.outputs) < 2 or not node.outputs[1]:
        return [out]
    assert isinstance(present_k, MLOperand) and isinstance(present_v, MLOperand)
    present = b.concat([b.reshape(present_k, [1, *shape]), b.reshape(present_v, [1, *shape])],
                       0)
    return [out, present]
