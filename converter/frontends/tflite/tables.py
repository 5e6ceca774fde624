"""Tables of the TFLite schema the reader needs besides the options decoding (`options`):
tensor type codes, the CUSTOM operator code, the dtypes numpy reads directly, and which
BuiltinOptions table each builtin operator uses."""

from __future__ import annotations

from converter.frontends.tflite.options import OPTIONS2_NAMES, OPTIONS_NAMES

CUSTOM_CODE = 32

TENSOR_TYPES: dict[int, str] = {
    0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 5: "string", 6: "bool",
    7: "int16", 8: "complex64", 9: "int8", 10: "float64", 11: "complex128", 12: "uint64",
    13: "resource", 14: "variant", 15: "uint32", 16: "uint16", 17: "int4", 18: "bfloat16",
    19: "int2", 20: "uint4", 21: "float8_e4m3fn", 22: "float8_e5m2",
}
NUMPY_READABLE = {"float32", "float16", "int32", "uint8", "int64", "bool", "int16", "int8",
                  "float64", "uint64", "uint32", "uint16", "complex64", "complex128"}

# ops whose options table is not named after the op
_OPTIONS_OF: dict[str, str] = {
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions", "L2_NORMALIZATION": "L2NormOptions",
    "MEAN": "ReducerOptions", "SUM": "ReducerOptions", "REDUCE_PROD": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions",
    "REDUCE_ANY": "ReducerOptions", "REDUCE_ALL": "ReducerOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions", "CONCAT_EMBEDDINGS": "ConcatEmbeddingsOptions",
    "BIDIRECTIONAL_SEQUENCE_LSTM": "BidirectionalSequenceLSTMOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "LSTM": "LSTMOptions", "MIRROR_PAD": "MirrorPadOptions", "ARG_MAX": "ArgMaxOptions",
    "ARG_MIN": "ArgMinOptions", "SELECT_V2": "SelectV2Options", "SCATTER_ND": "ScatterNdOptions",
    "GATHER_ND": "GatherNdOptions", "BATCH_MATMUL": "BatchMatMulOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions", "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "REVERSE_V2": "ReverseV2Options", "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions", "CONV_3D_TRANSPOSE": "Conv3DOptions",
    "MAXIMUM": "MaximumMinimumOptions", "MINIMUM": "MaximumMinimumOptions",
}


def _norm(name: str) -> str:
    return name.replace("_", "").lower().removesuffix("options")


_OPTIONS_BY_NORM = {_norm(n): n for n in (*OPTIONS2_NAMES.values(), *OPTIONS_NAMES.values())}


def options_class_for(op_type: str) -> str | None:
    """Name of the BuiltinOptions (or BuiltinOptions2) table a builtin op uses (None when it
    has none)."""
    if op_type in _OPTIONS_OF:
        return _OPTIONS_OF[op_type]
    return _OPTIONS_BY_NORM.get(_norm(op_type))
