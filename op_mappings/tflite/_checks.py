"""Checks shared by the TFLite handlers (not a mapping module: no handlers here).

A `.tflite` file comes from a stranger: an operator may list fewer inputs or outputs than its
op reads, or tensors of ranks its kernel never accepts. LiteRT refuses such operators when it
prepares them; here the importer refuses them before the handler runs (`io_problem`, from
the counts in `IO_COUNTS`), and handlers check ranks with `rank`, so a malformed operator is
a one-line `InvalidModel` naming it, never a Python exception from inside a handler.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from converter.core.errors import InvalidModel
from converter.core.ir import Node

_UNARY = ("ABS", "CEIL", "COS", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "RSQRT", "SIGN", "SIN",
          "SQRT", "SQUARE", "ELU", "GELU", "HARD_SWISH", "LEAKY_RELU", "LOGISTIC", "RELU",
          "RELU6", "RELU_0_TO_1", "RELU_N1_TO_1", "TANH", "BUCKETIZE", "CAST", "DENSIFY",
          "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "FAKE_QUANT", "LOGICAL_NOT", "MATRIX_DIAG",
          "L2_NORMALIZATION", "LOCAL_RESPONSE_NORMALIZATION", "AVERAGE_POOL_2D",
          "L2_POOL_2D", "MAX_POOL_2D", "DEQUANTIZE", "QUANTIZE", "RESHAPE", "SQUEEZE",
          "LOG_SOFTMAX", "SOFTMAX", "RANK", "SHAPE", "ZEROS_LIKE", "READ_VARIABLE")
_BINARY = ("PRELU", "ARG_MAX", "ARG_MIN", "ATAN2", "BATCH_MATMUL", "ADD", "DIV", "FLOOR_DIV",
           "FLOOR_MOD", "MAXIMUM", "MINIMUM", "MUL", "POW", "SQUARED_DIFFERENCE", "SUB",
           "EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "NOT_EQUAL",
           "CONV_3D", "CUMSUM", "FULLY_CONNECTED", "EMBEDDING_LOOKUP",
           "GATHER", "GATHER_ND", "LOGICAL_AND", "LOGICAL_OR", "MATRIX_SET_DIAG",
           "MIRROR_PAD", "PAD", "PADV2", "MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX",
           "REDUCE_MIN", "REDUCE_ANY", "REDUCE_ALL", "EXPAND_DIMS", "RESIZE_BILINEAR",
           "RESIZE_NEAREST_NEIGHBOR", "REVERSE_SEQUENCE", "REVERSE_V2", "SEGMENT_SUM",
           "BROADCAST_ARGS", "FILL", "TILE", "BROADCAST_TO", "TRANSPOSE", "SPLIT")
_TERNARY = ("CONV_2D", "DEPTHWISE_CONV_2D", "CONV_3D_TRANSPOSE", "DILATE",
            "DYNAMIC_UPDATE_SLICE", "SCATTER_ND", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_MIN", "UNSORTED_SEGMENT_PROD",
            "UNSORTED_SEGMENT_SUM", "SELECT", "SELECT_V2", "RANGE", "SLICE",
            "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "SPLIT_V", "TRANSPOSE_CONV",
            "custom::Convolution2DTransposeBias")

IO_COUNTS: dict[str, tuple[int, int, int | None]] = {
    **{op: (1, 1, 1) for op in _UNARY},
    **{op: (2, 1, 1) for op in _BINARY},
    **{op: (3, 1, 1) for op in _TERNARY},
    "ADD_N": (2, 1, 1), "STRIDED_SLICE": (4, 1, 1), "CONCATENATION": (1, 1, 1),
    "PACK": (1, 1, 1),
    "UNPACK": (1, 1, None), "SPLIT": (2, 1, None), "SPLIT_V": (3, 1, None),
    "TOPK_V2": (2, 2, 2), "ONE_HOT": (4, 1, 1), "SPARSE_TO_DENSE": (4, 1, 1),
    "EMBEDDING_LOOKUP_SPARSE": (5, 1, 1), "REDUCE_WINDOW": (5, 1, 1), "SVDF": (3, 1, 1),
    "RNN": (4, 1, 1), "UNIDIRECTIONAL_SEQUENCE_RNN": (4, 1, 1),
    "BIDIRECTIONAL_SEQUENCE_RNN": (4, 1, 2), "LSTM": (1, 1, None),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (1, 1, 1), "BIDIRECTIONAL_SEQUENCE_LSTM": (1, 1, 2),
    "VAR_HANDLE": (0, 1, 1), "ASSIGN_VARIABLE": (2, 0, 0), "IF": (1, 0, None),
}
"""Op (builtin name, or `custom::<code>`) -> (required inputs: the first ones, which must be
present, not omitted (-1); least outputs; most outputs, None: no limit). Ops not listed
(WHILE, CALL_ONCE, STABLEHLO_COMPOSITE, ops without a handler) are not checked here.

The required counts are what LiteRT's kernels read, not only what the handler needs: CONV_2D
and DEPTHWISE_CONV_2D need their bias (conv.cc refuses a missing one; depthwise_conv.cc accepts
two inputs and then crashes, SIGSEGV, in `invoke`), STRIDED_SLICE its strides (a -1 crashes
LiteRT), ADD_N two addends."""

LISTED: dict[str, tuple[int, ...]] = {
    "RESHAPE": (1, 2), "SVDF": (5,), "RNN": (5,), "UNIDIRECTIONAL_SEQUENCE_RNN": (5,),
    "BIDIRECTIONAL_SEQUENCE_RNN": (12,), "LSTM": (5, 20, 24),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (20, 24), "BIDIRECTIONAL_SEQUENCE_LSTM": (48,),
}
"""Op -> the numbers of inputs its operator may list, omitted ones (-1) included: LiteRT's
`NumInputs(node)` checks (the recurrent kernels read optional inputs by position, so each one
is listed, as -1 when absent)."""

PRESENT_WHEN_LISTED = frozenset({"RESHAPE"})
"""Ops whose listed inputs must all be present: RESHAPE's kernel reads a listed shape input
without checking for -1 (a SIGSEGV in LiteRT); it may leave it out of the list instead."""


def io_problem(node: Node) -> str | None:
    """What is wrong with the input/output counts of a TFLite operator (None: nothing):
    the first inputs its op requires are listed and not omitted, it lists as many inputs as
    LiteRT's kernel accepts (`LISTED`, `PRESENT_WHEN_LISTED`), and as many outputs as its op
    computes."""
    key = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
    counts = IO_COUNTS.get(key)
    if counts is None:
        return None
    required, least, most = counts
    missing = [i for i in range(required) if not node.input(i)]
    if missing:
        if len(node.inputs) < required:
            return (f"the operator lists {len(node.inputs)} input(s), {node.op_type} needs at "
                    f"least {required}")
        return f"required input(s) {missing} of {node.op_type} are omitted (-1)"
    listed = LISTED.get(key)
    if listed is not None and len(node.inputs) not in listed:
        want = " or ".join(str(c) for c in listed)
        return (f"the operator lists {len(node.inputs)} input(s), {node.op_type} lists {want} "
                "(omitted ones as -1)")
    if key in PRESENT_WHEN_LISTED and not all(node.inputs):
        omitted = [i for i, name in enumerate(node.inputs) if not name]
        return f"input(s) {omitted} of {node.op_type} are listed but omitted (-1)"
    n = len(node.outputs)
    if n < least or (most is not None and n > most):
        want = str(least) if least == most else (
            f"at least {least}" if most is None else f"{least} to {most}")
        return f"the operator lists {n} output(s), {node.op_type} has {want}"
    return None


def rank(x: Any, ranks: int | Collection[int], what: str = "input") -> int:
    """The rank of `x` (an operand or array), which must be `ranks` (one rank or several);
    InvalidModel otherwise."""
    allowed = (ranks,) if isinstance(ranks, int) else tuple(ranks)
    r = len(tuple(x.shape))
    if r not in allowed:
        want = " or ".join(str(a) for a in allowed)
        raise InvalidModel(f"{what} has rank {r}, {want} expected")
    return r
