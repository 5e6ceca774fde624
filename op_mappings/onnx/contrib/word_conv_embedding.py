"""com.microsoft WordConvEmbedding (a character CNN word embedding; onnxruntime CPU kernel) ->
WebNN gather + conv2d + tanh + masked reduceMax.

Sequence [S, W] holds the character ids of S words (0 pads; a word whose first id is 0 is
empty); word s has len(s) = #ids > 0. Its characters are embedded with C [V, E] (the first
max(len, k) of them, zeros after), convolved with W [F, 1, k, E] (+ B [F]) over every window
of k characters that starts before max(len, k) - k + 1, passed through tanh and max-pooled
over the windows: Y [S, F]. Rows of empty words are 0 (onnxruntime leaves them unwritten).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity, float_operand, scalar

MS = "com.microsoft"


@onnx_op("WordConvEmbedding", since=1, domain=MS)
def word_conv_embedding(ctx: ImportContext, node: Node) -> Outputs:
    """Character-CNN word embeddings (see the module docstring).
    Restrictions: Sequence int32 [S, W] with W >= the conv window; float32 weights;
    embedding_size / conv_window_size / char_embedding_size, when given, must match them."""
    check_arity(node, (4, 4))
    b = ctx.builder
    seq = ctx.operand(node.inputs[0])
    if seq.data_type != "int32" or seq.rank != 2:
        raise UnsupportedDataType(f"WordConvEmbedding Sequence must be int32 [S, W], got "
                                  f"{seq.data_type}{list(seq.shape)}")
    w = float_operand(ctx, node, 1, "W")
    bias = float_operand(ctx, node, 2, "B")
    table = float_operand(ctx, node, 3, "C")
    if w.rank != 4 or w.shape[1] != 1 or table.rank != 2 or w.shape[3] != table.shape[1] \
            or list(bias.shape) != [w.shape[0]]:
        raise InvalidModel(f"WordConvEmbedding W {list(w.shape)}, B {list(bias.shape)} and C "
                           f"{list(table.shape)} must be [F, 1, k, E], [F] and [V, E]")
    filters, _, window, emb = w.shape
    for name, value in (("embedding_size", filters), ("conv_window_size", window),
                        ("char_embedding_size", emb)):
        want = attr_int(node, name, -1)
        if want not in (-1, value):
            raise InvalidModel(f"WordConvEmbedding {name} {want} does not match the weights "
                               f"({value})")
    words, chars = seq.shape
    if chars < window:
        raise InvalidModel(f"WordConvEmbedding words of {chars} characters are shorter than "
                           f"the conv window {window}")
    zero_i = ctx.constant(np.zeros((), np.int32))
    present = b.cast(b.greater(seq, zero_i), "int32")
    first = b.slice(present, [0, 0], [words, 1])
    length = b.mul(b.reduce_sum(present, axes=[1], keep_dimensions=True), first)  # [S, 1]
    looked = b.max(length, ctx.constant(np.asarray(window, np.int32)))  # max(len, k)
    pos = ctx.constant(np.arange(chars, dtype=np.int32).reshape(1, chars))
    keep = b.reshape(b.lesser(pos, looked), [words, chars, 1])
    e = b.where(keep, b.gather(table, seq, axis=0), scalar(ctx, 0.0, "float32"))
    conv = b.conv2d(b.reshape(e, [words, 1, chars, emb]), w, bias=bias)  # [S, F, U, 1]
    units = chars - window + 1
    act = b.tanh(b.reshape(conv, [words, filters, units]))
    starts = ctx.constant(np.arange(units, dtype=np.int32).reshape(1, 1, units))
    valid = b.lesser(starts, b.reshape(b.sub(looked, ctx.constant(
        np.asarray(window - 1, np.int32))), [words, 1, 1]))
    pooled = b.reduce_max(b.where(valid, act, scalar(ctx, -1e12, "float32")), axes=[2])
    nonempty = b.greater(length, zero_i)  # [S, 1]
    return [b.where(nonempty, pooled, scalar(ctx, 0.0, "float32"))]
