"""Write the `limits.json` of the built-in targets `chromium-dml` and `chromium-coreml` from a
transcription of Chromium's backend sources.

Chromium describes what a WebNN backend supports in one C++ record, `webnn::ContextProperties`
(its `DataTypeLimits`: one `SupportedTensors` = data types + rank range per field, such as
`conv2d_input` or `gather_indices`), built by

- DirectML: `ContextImplDml::GetProperties(feature_level)` in
  services/webnn/dml/context_impl_dml.cc (a base table, then upgrades per DirectML feature
  level 4.1, 5.0, 5.1, 6.0, 6.2, 6.3);
- Core ML: `GraphBuilderCoreml::GetContextProperties()` in
  services/webnn/coreml/graph_builder_coreml.cc (a base table, then an upgrade on macOS 15).

Blink turns that record into what `MLContext.opSupportLimits()` returns
(`MLContext::opSupportLimits` in third_party/blink/renderer/modules/ml/ml_context.cc): each
op's roles read one field each (`ROLES` below: conv2d's filter reads `conv2d_input`, its bias
`conv2d_bias`; comparisons' output has `logical_output`'s data types with their inputs' ranks;
quantizeLinear's output reads `quantize_linear_zero_point`), data types are listed in
`OperandDataType` enum order, the graph `output` limits are the `input` limits.

The tables here are hand transcriptions of those three functions (the sources cannot be built
or run here). `ROLES` is checked against the real browser: every role of the shipped
chromium-tflite/limits.json (Chromium 153's own `opSupportLimits()`) is produced, and roles
that read the same field hold the same value there (tests/tools/test_chromium_limits.py).

Restrictions: DirectML limits depend on the adapter's feature level; the profile assumes
DML_FEATURE_LEVEL_6_3 or above (every upgrade applied; a device at a lower level supports
less). Core ML assumes macOS 15 or later (4-bit dequantizeLinear inputs).

Usage: `python -m tools.targets.chromium_limits [OUT_DIR]` (default: converter/passes/targets) writes
OUT_DIR/chromium-dml/limits.json and OUT_DIR/chromium-coreml/limits.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ENUM_ORDER = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8",
              "int4", "uint4")
"""`webnn::OperandDataType` in enum order: the order Blink lists `dataTypes` in."""

Types = frozenset[str]
Field = tuple[Types, int, int]  # data types, min rank, max rank


def _types(*names: str) -> Types:
    unknown = set(names) - set(ENUM_ORDER)
    assert not unknown, unknown
    return frozenset(names)


# services/webnn/public/cpp/supported_data_types.h (DataTypeConstraint::)
ALL = _types(*ENUM_ORDER)  # SupportedDataTypes::All()
ALL8 = _types("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")
F = _types("float16", "float32")  # kFloat16To32
F32 = _types("float32")
U8 = _types("uint8")
INTS8 = _types("uint8", "int8")
INTS4_TO_INTS8 = _types("uint4", "int4", "uint8", "int8")
INT32_TO_64 = _types("int32", "int64")
F_I8_TO_I32 = _types("float16", "float32", "int8", "int32")  # kFloat16To32Int8To32
F_I8_TO_I64 = _types("float16", "float32", "int8", "int32", "int64")  # kFloat16To32Int8To64
F_INTS32_TO_64 = _types("float16", "float32", "int32", "uint32", "int64", "uint64")
INTS4_INTS8_INTS32 = _types("int4", "uint4", "int8", "uint8", "int32", "uint32")


def _up_to(n: int) -> tuple[int, int]:
    return (0, n)


def _exactly(n: int) -> tuple[int, int]:
    return (n, n)


# --- DirectML: ContextImplDml::GetProperties ---------------------------------------------
# Constants local to GetProperties.
DML_F_INTS8 = _types("float16", "float32", "int8", "uint8")  # kFloat16To32Ints8
DML_F_INTS32 = _types("float16", "float32", "int32", "uint32")  # kFloat16To32Ints32
DML_F_INTS8_TO_32 = _types("float16", "float32", "int8", "uint8", "int32", "uint32")
DML_INTS4_TO_32 = INTS4_INTS8_INTS32  # kInts4To32
DML_INTS8_TO_32 = _types("int8", "uint8", "int32", "uint32")
DML_UINT8_TO_32 = _types("uint8", "uint32")
DML_INDICES = _types("int32", "uint32", "int64", "uint64")
DML_MAX = _up_to(8)


def dml_fields() -> dict[str, Field]:
    """The DirectML `DataTypeLimits` at feature level 6.3 or above."""
    t: dict[str, tuple[Types, tuple[int, int]]] = {
        "input": (ALL8, DML_MAX), "constant": (ALL8, DML_MAX),
        "arg_min_max_input": (ALL8, DML_MAX), "arg_min_max_output": (INT32_TO_64, DML_MAX),
        "batch_normalization_input": (F, DML_MAX), "batch_normalization_mean": (F, DML_MAX),
        "cast_input": (ALL8, DML_MAX), "clamp_input": (DML_F_INTS8_TO_32, DML_MAX),
        "concat_inputs": (DML_F_INTS8_TO_32, DML_MAX),
        "conv2d_input": (F, (3, 5)), "conv2d_bias": (F, _exactly(1)),
        "conv_transpose2d_input": (F, (3, 5)), "conv_transpose2d_bias": (F, _exactly(1)),
        "cumulative_sum_input": (DML_F_INTS32, DML_MAX),
        "dequantize_linear_input": (DML_INTS8_TO_32, DML_MAX),
        "dequantize_linear_scale": (F32, DML_MAX),
        "dequantize_linear_zero_point": (DML_INTS8_TO_32, DML_MAX),
        "add_input": (DML_F_INTS32, DML_MAX), "sub_input": (DML_F_INTS32, DML_MAX),
        "mul_input": (DML_F_INTS32, DML_MAX), "div_input": (DML_F_INTS32, DML_MAX),
        "max_input": (DML_F_INTS8_TO_32, DML_MAX), "min_input": (DML_F_INTS8_TO_32, DML_MAX),
        "pow_input": (DML_F_INTS8_TO_32, DML_MAX),
        "equal_input": (DML_F_INTS8_TO_32, DML_MAX),
        "greater_input": (DML_F_INTS8_TO_32, DML_MAX),
        "greater_or_equal_input": (DML_F_INTS8_TO_32, DML_MAX),
        "lesser_input": (DML_F_INTS8_TO_32, DML_MAX),
        "lesser_or_equal_input": (DML_F_INTS8_TO_32, DML_MAX),
        "not_equal_input": (DML_UINT8_TO_32, DML_MAX),
        "logical_and_input": (DML_UINT8_TO_32, DML_MAX),
        "logical_or_input": (DML_UINT8_TO_32, DML_MAX),
        "logical_xor_input": (DML_UINT8_TO_32, DML_MAX),
        "logical_not_input": (DML_UINT8_TO_32, DML_MAX),
        "is_nan_input": (F, DML_MAX), "is_infinite_input": (F, DML_MAX),
        "logical_output": (DML_UINT8_TO_32, DML_MAX),
        "abs_input": (F_I8_TO_I32, DML_MAX), "ceil_input": (F, DML_MAX),
        "cos_input": (F, DML_MAX), "erf_input": (F, DML_MAX), "exp_input": (F, DML_MAX),
        "floor_input": (F, DML_MAX), "identity_input": (DML_F_INTS8_TO_32, DML_MAX),
        "log_input": (F, DML_MAX), "neg_input": (F_I8_TO_I32, DML_MAX),
        "reciprocal_input": (F, DML_MAX), "round_even_input": (F, DML_MAX),
        "sign_input": (F_I8_TO_I32, DML_MAX), "sin_input": (F, DML_MAX),
        "sqrt_input": (F, DML_MAX), "tan_input": (F, DML_MAX), "elu_input": (F, DML_MAX),
        "expand_input": (DML_F_INTS8_TO_32, DML_MAX),
        "gather_input": (DML_F_INTS8_TO_32, DML_MAX), "gather_indices": (DML_INDICES, DML_MAX),
        "gather_elements_input": (DML_F_INTS8_TO_32, DML_MAX),
        "gather_elements_indices": (DML_INDICES, DML_MAX),
        "gather_nd_input": (DML_F_INTS8_TO_32, DML_MAX),
        "gather_nd_indices": (DML_INDICES, DML_MAX),
        "gelu_input": (F, DML_MAX),
        "gemm_a": (F, (2, 4)), "gemm_c": (F, _up_to(2)),
        "gru_input": (F, _exactly(3)), "gru_bias": (F, _exactly(2)),
        "gru_output_sequence": (F, _exactly(4)),
        "gru_cell_input": (F, _exactly(2)), "gru_cell_bias": (F, _exactly(1)),
        "hard_sigmoid_input": (F, DML_MAX), "hard_swish_input": (F, DML_MAX),
        "instance_normalization_input": (F, DML_MAX),
        "instance_normalization_scale": (F, DML_MAX),
        "layer_normalization_input": (F, DML_MAX),
        "leaky_relu_input": (F, DML_MAX), "linear_input": (F, DML_MAX),
        "lstm_input": (F, _exactly(3)), "lstm_bias": (F, _exactly(2)),
        "lstm_output_sequence": (F, _exactly(4)),
        "lstm_cell_input": (F, _exactly(2)), "lstm_cell_bias": (F, _exactly(1)),
        "matmul_input": (F, DML_MAX), "pad_input": (DML_F_INTS8_TO_32, DML_MAX),
        "average_pool2d_input": (F, (4, 5)), "l2_pool2d_input": (F, (4, 5)),
        "max_pool2d_input": (DML_F_INTS8, (4, 5)),
        "prelu_input": (F, DML_MAX),
        "quantize_linear_input": (F32, DML_MAX), "quantize_linear_zero_point": (INTS8, DML_MAX),
        "reduce_l1_input": (F, DML_MAX), "reduce_l2_input": (F, DML_MAX),
        "reduce_log_sum_input": (F, DML_MAX), "reduce_log_sum_exp_input": (F, DML_MAX),
        "reduce_max_input": (DML_F_INTS8_TO_32, DML_MAX), "reduce_mean_input": (F, DML_MAX),
        "reduce_min_input": (DML_F_INTS8_TO_32, DML_MAX),
        "reduce_product_input": (F, DML_MAX), "reduce_sum_input": (DML_F_INTS32, DML_MAX),
        "reduce_sum_square_input": (F, DML_MAX),
        "relu_input": (F, DML_MAX), "resample2d_input": (F, _exactly(4)),
        "reshape_input": (DML_F_INTS8_TO_32, DML_MAX),
        "reverse_input": (DML_F_INTS8_TO_32, DML_MAX),
        "scatter_elements_input": (DML_F_INTS8_TO_32, DML_MAX),
        "scatter_elements_indices": (DML_INDICES, DML_MAX),
        "scatter_nd_input": (DML_F_INTS8_TO_32, DML_MAX),
        "scatter_nd_indices": (DML_INDICES, DML_MAX),
        "scatter_nd_updates": (DML_F_INTS8_TO_32, DML_MAX),
        "sigmoid_input": (F, DML_MAX), "slice_input": (DML_F_INTS8_TO_32, DML_MAX),
        "softmax_input": (F, DML_MAX), "softplus_input": (F, DML_MAX),
        "softsign_input": (F, DML_MAX), "split_input": (DML_F_INTS8_TO_32, DML_MAX),
        "tanh_input": (F, DML_MAX), "tile_input": (ALL8, DML_MAX),
        "transpose_input": (DML_F_INTS8_TO_32, DML_MAX),
        "triangular_input": (DML_F_INTS32, (2, 8)),
        "where_condition": (U8, DML_MAX), "where_value": (DML_F_INTS8_TO_32, DML_MAX),
    }
    levels: list[dict[str, Types | tuple[int, int]]] = [
        {  # DML_FEATURE_LEVEL_4_1
            "concat_inputs": ALL8, "add_input": F_INTS32_TO_64, "sub_input": F_INTS32_TO_64,
            "mul_input": F_INTS32_TO_64, "equal_input": ALL8, "greater_input": ALL8,
            "greater_or_equal_input": ALL8, "lesser_input": ALL8,
            "lesser_or_equal_input": ALL8, "abs_input": F_I8_TO_I64, "identity_input": ALL8,
            "expand_input": ALL8, "gather_input": ALL8, "gather_elements_input": ALL8,
            "gather_nd_input": ALL8, "not_equal_input": ALL8, "reshape_input": ALL8,
            "reverse_input": ALL8, "scatter_elements_input": ALL8, "scatter_nd_input": ALL8,
            "scatter_nd_updates": ALL8, "sign_input": F_I8_TO_I64, "slice_input": ALL8,
            "split_input": ALL8, "transpose_input": ALL8, "triangular_input": F_INTS32_TO_64},
        {  # DML_FEATURE_LEVEL_5_0
            "clamp_input": ALL8, "cumulative_sum_input": F_INTS32_TO_64, "max_input": ALL8,
            "min_input": ALL8, "pad_input": ALL8, "reduce_l1_input": F_INTS32_TO_64,
            "reduce_max_input": ALL8, "reduce_min_input": ALL8,
            "reduce_sum_input": F_INTS32_TO_64, "reduce_sum_square_input": F_INTS32_TO_64,
            "where_value": ALL8, "max_pool2d_input": ALL8},
        {  # DML_FEATURE_LEVEL_5_1 (resample2d: ranks)
            "add_input": ALL8, "sub_input": ALL8, "mul_input": ALL8,
            "div_input": DML_F_INTS8_TO_32, "prelu_input": F_I8_TO_I32,
            "relu_input": F_I8_TO_I32, "resample2d_input": _up_to(4),
            "triangular_input": ALL8},
        {  # DML_FEATURE_LEVEL_6_0
            "div_input": ALL8, "dequantize_linear_scale": F, "quantize_linear_input": F},
        {  # DML_FEATURE_LEVEL_6_2
            "resample2d_input": DML_F_INTS8},
        {  # DML_FEATURE_LEVEL_6_3
            "input": ALL, "constant": ALL, "dequantize_linear_input": DML_INTS4_TO_32,
            "dequantize_linear_zero_point": DML_INTS4_TO_32,
            "quantize_linear_zero_point": INTS4_TO_INTS8},
    ]
    for level in levels:
        for name, value in level.items():
            types, ranks = t[name]
            t[name] = (types, value) if isinstance(value, tuple) else (value, ranks)
    return {k: (types, lo, hi) for k, (types, (lo, hi)) in t.items()}


# --- Core ML: GraphBuilderCoreml::GetContextProperties -----------------------------------
ML_FI32 = _types("float16", "float32", "int32")  # kFloatsAndInt32
ML_CONSTANT = _types("float32", "float16", "int32", "uint32", "int8", "uint8", "int4", "uint4")
ML_F_I8_I32_U8 = _types("float32", "float16", "int32", "int8", "uint8")
ML_INDICES = _types("int32", "int8", "uint8")
ML_INTS8_INTS32 = _types("int8", "uint8", "int32", "uint32")
ML_MAX = _up_to(5)
ML_NON_SCALAR = (1, 5)


def coreml_fields() -> dict[str, Field]:
    """The Core ML `DataTypeLimits` on macOS 15 or later."""
    i32 = _types("int32")
    t: dict[str, tuple[Types, tuple[int, int]]] = {
        "input": (ML_FI32, ML_MAX), "constant": (ML_CONSTANT, ML_MAX),
        "arg_min_max_input": (ML_FI32, ML_NON_SCALAR), "arg_min_max_output": (i32, ML_MAX),
        "batch_normalization_input": (F, (3, 5)),
        "batch_normalization_mean": (F, _exactly(1)),
        "cast_input": (ML_F_I8_I32_U8, ML_MAX), "clamp_input": (F, ML_MAX),
        "concat_inputs": (ML_FI32, ML_MAX),
        "conv2d_input": (F, (3, 5)), "conv2d_bias": (F, _exactly(1)),
        "conv_transpose2d_input": (F, (3, 5)), "conv_transpose2d_bias": (F, _exactly(1)),
        "cumulative_sum_input": (ML_FI32, ML_MAX),
        "dequantize_linear_input": (ML_INTS8_INTS32, ML_MAX),
        "dequantize_linear_scale": (F, ML_MAX),
        "dequantize_linear_zero_point": (ML_INTS8_INTS32, ML_MAX),
        **{f"{op}_input": (ML_FI32, ML_MAX)
           for op in ("add", "sub", "mul", "div", "max", "min", "pow", "equal", "greater",
                      "greater_or_equal", "not_equal", "lesser", "lesser_or_equal")},
        **{f"logical_{op}_input": (U8, ML_MAX) for op in ("and", "or", "xor", "not")},
        "is_nan_input": (F, ML_MAX), "is_infinite_input": (F, ML_MAX),
        "logical_output": (U8, ML_MAX),
        "abs_input": (ML_FI32, ML_MAX), "ceil_input": (F, ML_MAX), "cos_input": (F, ML_MAX),
        "erf_input": (F, ML_MAX), "exp_input": (F, ML_MAX), "floor_input": (F, ML_MAX),
        "identity_input": (ML_FI32, ML_MAX), "log_input": (F, ML_MAX),
        "neg_input": (ML_FI32, ML_MAX), "reciprocal_input": (F, ML_MAX),
        "round_even_input": (F, ML_MAX), "sign_input": (ML_FI32, ML_MAX),
        "sin_input": (F, ML_MAX), "sqrt_input": (F, ML_MAX), "tan_input": (F, ML_MAX),
        "elu_input": (F, ML_MAX), "expand_input": (ML_FI32, ML_MAX),
        "gather_input": (ML_F_I8_I32_U8, ML_MAX), "gather_indices": (ML_INDICES, ML_MAX),
        "gather_elements_input": (ML_F_I8_I32_U8, ML_MAX),
        "gather_elements_indices": (ML_INDICES, ML_MAX),
        "gather_nd_input": (ML_F_I8_I32_U8, ML_MAX),
        "gather_nd_indices": (ML_INDICES, ML_MAX),
        "gelu_input": (F, ML_MAX),
        "gemm_a": (F, _exactly(2)), "gemm_c": (F, _up_to(2)),
        "gru_input": (F, _exactly(3)), "gru_bias": (F, _exactly(2)),
        "gru_output_sequence": (F, _exactly(4)),
        "gru_cell_input": (F, _exactly(2)), "gru_cell_bias": (F, _exactly(1)),
        "hard_sigmoid_input": (F, ML_MAX), "hard_swish_input": (F, ML_MAX),
        "instance_normalization_input": (F, (3, 4)),
        "instance_normalization_scale": (F, ML_MAX),
        "layer_normalization_input": (F, ML_MAX),
        "leaky_relu_input": (F, ML_MAX), "linear_input": (F, ML_MAX),
        "lstm_input": (F, _exactly(3)), "lstm_bias": (F, _exactly(2)),
        "lstm_output_sequence": (F, _exactly(4)),
        "lstm_cell_input": (F, _exactly(2)), "lstm_cell_bias": (F, _exactly(1)),
        "matmul_input": (ML_FI32, ML_MAX), "pad_input": (F, ML_MAX),
        "average_pool2d_input": (F, (3, 5)), "l2_pool2d_input": (F, (3, 4)),
        "max_pool2d_input": (F, (3, 5)),
        "prelu_input": (ML_FI32, ML_MAX),
        "quantize_linear_input": (F, ML_MAX),
        "quantize_linear_zero_point": (ML_INTS8_INTS32, ML_MAX),
        **{f"reduce_{op}_input": (ML_FI32, ML_MAX)
           for op in ("l1", "l2", "log_sum", "log_sum_exp", "max", "mean", "min", "product",
                      "sum", "sum_square")},
        "relu_input": (F, ML_MAX), "resample2d_input": (F, (3, 5)),
        "reshape_input": (ML_F_I8_I32_U8, ML_MAX), "reverse_input": (ML_FI32, ML_MAX),
        "scatter_elements_input": (ML_FI32, ML_MAX),
        "scatter_elements_indices": (i32, ML_MAX),
        "scatter_nd_input": (ML_FI32, ML_MAX), "scatter_nd_indices": (i32, ML_MAX),
        "scatter_nd_updates": (ML_FI32, ML_MAX),
        "sigmoid_input": (F, ML_MAX), "slice_input": (ML_F_I8_I32_U8, ML_MAX),
        "softmax_input": (F, ML_MAX), "softplus_input": (F, ML_MAX),
        "softsign_input": (F, ML_MAX), "split_input": (ML_FI32, ML_MAX),
        "tanh_input": (F, ML_MAX), "tile_input": (ML_FI32, ML_MAX),
        "transpose_input": (ML_FI32, ML_MAX), "triangular_input": (ML_FI32, ML_MAX),
        "where_condition": (U8, ML_MAX), "where_value": (ML_FI32, ML_MAX),
    }
    # macOS 15: 4-bit dequantizeLinear (kInts4Ints8Ints32).
    for name in ("dequantize_linear_input", "dequantize_linear_zero_point"):
        t[name] = (INTS4_INTS8_INTS32, t[name][1])
    return {k: (types, lo, hi) for k, (types, (lo, hi)) in t.items()}


# --- Blink: MLContext::opSupportLimits ----------------------------------------------------
LOGICAL = "@logical"
"""Role marker: `logical_output`'s data types with the ranks of the named input field."""


def _single(field: str) -> dict[str, str]:
    return {"input": field, "output": field}


def _binary(field: str) -> dict[str, str]:
    return {"a": field, "b": field, "output": field}


def _compare(field: str) -> dict[str, str]:
    return {"a": field, "b": field, "output": LOGICAL + ":" + field}


ROLES: dict[str, dict[str, str]] = {
    "argMin": {"input": "arg_min_max_input", "output": "arg_min_max_output"},
    "argMax": {"input": "arg_min_max_input", "output": "arg_min_max_output"},
    "batchNormalization": {"input": "batch_normalization_input",
                           "mean": "batch_normalization_mean",
                           "variance": "batch_normalization_mean",
                           "scale": "batch_normalization_mean",
                           "bias": "batch_normalization_mean",
                           "output": "batch_normalization_input"},
    "cast": _single("cast_input"),
    "clamp": _single("clamp_input"),
    "concat": {"inputs": "concat_inputs", "output": "concat_inputs"},
    "conv2d": {"input": "conv2d_input", "filter": "conv2d_input", "bias": "conv2d_bias",
               "output": "conv2d_input"},
    "convTranspose2d": {"input": "conv_transpose2d_input", "filter": "conv_transpose2d_input",
                        "bias": "conv_transpose2d_bias", "output": "conv_transpose2d_input"},
    "cumulativeSum": _single("cumulative_sum_input"),
    "dequantizeLinear": {"input": "dequantize_linear_input",
                         "scale": "dequantize_linear_scale",
                         "zeroPoint": "dequantize_linear_input",
                         "output": "dequantize_linear_scale"},
    **{op: _binary(f"{field}_input") for op, field in (
        ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div"), ("max", "max"),
        ("min", "min"), ("pow", "pow"))},
    **{op: _compare(f"{field}_input") for op, field in (
        ("equal", "equal"), ("greater", "greater"), ("greaterOrEqual", "greater_or_equal"),
        ("lesser", "lesser"), ("lesserOrEqual", "lesser_or_equal"),
        ("notEqual", "not_equal"), ("logicalAnd", "logical_and"),
        ("logicalOr", "logical_or"), ("logicalXor", "logical_xor"))},
    **{op: {"a": f"{field}_input", "output": f"{LOGICAL}:{field}_input"}
       for op, field in (("logicalNot", "logical_not"), ("isNaN", "is_nan"),
                         ("isInfinite", "is_infinite"))},
    **{op: _single(f"{field}_input") for op, field in (
        ("abs", "abs"), ("ceil", "ceil"), ("cos", "cos"), ("erf", "erf"), ("exp", "exp"),
        ("floor", "floor"), ("identity", "identity"), ("log", "log"), ("neg", "neg"),
        ("reciprocal", "reciprocal"), ("roundEven", "round_even"), ("sign", "sign"),
        ("sin", "sin"), ("sqrt", "sqrt"), ("tan", "tan"), ("elu", "elu"),
        ("expand", "expand"), ("gelu", "gelu"), ("hardSigmoid", "hard_sigmoid"),
        ("hardSwish", "hard_swish"), ("leakyRelu", "leaky_relu"), ("linear", "linear"),
        ("pad", "pad"), ("averagePool2d", "average_pool2d"), ("l2Pool2d", "l2_pool2d"),
        ("maxPool2d", "max_pool2d"), ("reduceL1", "reduce_l1"), ("reduceL2", "reduce_l2"),
        ("reduceLogSum", "reduce_log_sum"), ("reduceLogSumExp", "reduce_log_sum_exp"),
        ("reduceMax", "reduce_max"), ("reduceMean", "reduce_mean"),
        ("reduceMin", "reduce_min"), ("reduceProduct", "reduce_product"),
        ("reduceSum", "reduce_sum"), ("reduceSumSquare", "reduce_sum_square"),
        ("relu", "relu"), ("resample2d", "resample2d"), ("reshape", "reshape"),
        ("reverse", "reverse"), ("sigmoid", "sigmoid"), ("slice", "slice"),
        ("softmax", "softmax"), ("softplus", "softplus"), ("softsign", "softsign"),
        ("tanh", "tanh"), ("tile", "tile"), ("transpose", "transpose"),
        ("triangular", "triangular"))},
    "gather": {"input": "gather_input", "indices": "gather_indices", "output": "gather_input"},
    "gatherElements": {"input": "gather_elements_input", "indices": "gather_elements_indices",
                       "output": "gather_elements_input"},
    "gatherND": {"input": "gather_nd_input", "indices": "gather_nd_indices",
                 "output": "gather_nd_input"},
    "gemm": {"a": "gemm_a", "b": "gemm_a", "c": "gemm_c", "output": "gemm_a"},
    "gru": {"input": "gru_input", "weight": "gru_input", "recurrentWeight": "gru_input",
            "bias": "gru_bias", "recurrentBias": "gru_bias",
            "initialHiddenState": "gru_input", "output0": "gru_input",
            "output1": "gru_output_sequence"},
    "gruCell": {"input": "gru_cell_input", "weight": "gru_cell_input",
                "recurrentWeight": "gru_cell_input", "hiddenState": "gru_cell_input",
                "bias": "gru_cell_bias", "recurrentBias": "gru_cell_bias",
                "output": "gru_cell_input"},
    "instanceNormalization": {"input": "instance_normalization_input",
                              "scale": "instance_normalization_scale",
                              "bias": "instance_normalization_scale",
                              "output": "instance_normalization_input"},
    "layerNormalization": {"input": "layer_normalization_input",
                           "scale": "layer_normalization_input",
                           "bias": "layer_normalization_input",
                           "output": "layer_normalization_input"},
    "lstm": {"input": "lstm_input", "weight": "lstm_input", "recurrentWeight": "lstm_input",
             "bias": "lstm_bias", "recurrentBias": "lstm_bias", "peepholeWeight": "lstm_bias",
             "initialHiddenState": "lstm_input", "initialCellState": "lstm_input",
             "output0": "lstm_input", "output1": "lstm_input",
             "output2": "lstm_output_sequence"},
    "lstmCell": {"input": "lstm_cell_input", "weight": "lstm_cell_input",
                 "recurrentWeight": "lstm_cell_input", "hiddenState": "lstm_cell_input",
                 "cellState": "lstm_cell_input", "bias": "lstm_cell_bias",
                 "recurrentBias": "lstm_cell_bias", "peepholeWeight": "lstm_cell_bias",
                 "output0": "lstm_cell_input", "output1": "lstm_cell_input"},
    "matmul": _binary("matmul_input"),
    "prelu": {"input": "prelu_input", "slope": "prelu_input", "output": "prelu_input"},
    "quantizeLinear": {"input": "quantize_linear_input", "scale": "quantize_linear_input",
                       "zeroPoint": "quantize_linear_zero_point",
                       "output": "quantize_linear_zero_point"},
    "scatterElements": {"input": "scatter_elements_input",
                        "indices": "scatter_elements_indices",
                        "updates": "scatter_elements_input",
                        "output": "scatter_elements_input"},
    "scatterND": {"input": "scatter_nd_input", "indices": "scatter_nd_indices",
                  "updates": "scatter_nd_updates", "output": "scatter_nd_input"},
    "split": {"input": "split_input", "outputs": "split_input"},
    "where": {"condition": "where_condition", "trueValue": "where_value",
              "falseValue": "where_value", "output": "where_value"},
}
"""Per op and role, the `DataTypeLimits` field Blink's `opSupportLimits()` reads."""


def _tensor(types: Types, lo: int, hi: int) -> dict[str, Any]:
    return {"dataTypes": [d for d in ENUM_ORDER if d in types],
            "rankRange": {"max": hi, "min": lo}}


def op_support_limits(fields: dict[str, Field], layout: str,
                      max_tensor_byte_length: int) -> dict[str, Any]:
    """What Blink's `opSupportLimits()` returns for a backend's `DataTypeLimits`."""
    out: dict[str, Any] = {
        "preferredInputLayout": layout, "maxTensorByteLength": max_tensor_byte_length,
        "input": _tensor(*fields["input"]), "constant": _tensor(*fields["constant"]),
        "output": _tensor(*fields["input"]),  # DataTypeLimits::output() is input
    }
    for op, roles in ROLES.items():
        entry: dict[str, Any] = {}
        for role, field in roles.items():
            if field.startswith(LOGICAL + ":"):
                _, lo, hi = fields[field.split(":", 1)[1]]
                entry[role] = _tensor(fields["logical_output"][0], lo, hi)
            else:
                entry[role] = _tensor(*fields[field])
        out[op] = entry
    return out


PROFILES: dict[str, tuple[Any, str, int]] = {
    "chromium-dml": (dml_fields, "nchw", 2**32 - 1),  # UINT_MAX
    "chromium-coreml": (coreml_fields, "nchw", 2**31 - 1),  # INT_MAX
}


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "converter" / \
        "targets"
    for name, (fields, layout, max_bytes) in PROFILES.items():
        path = root / name / "limits.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(op_support_limits(fields(), layout, max_bytes), indent=2,
                                   sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
