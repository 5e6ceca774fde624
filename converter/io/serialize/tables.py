"""The tables every reader and writer of the webnn-graph format shares: file constants and
limits, data type names, keywords and option aliases. Operator signatures are
`converter.core.webnn.operators`."""

from __future__ import annotations

# -- files ----------------------------------------------------------------------------------
WEIGHTS_MAGIC = b"WGWT"
WEIGHTS_VERSION = 1
WEIGHTS_HEADER_BYTES = 8
MANIFEST_FORMAT = "wg-weights-manifest"
JSON_FORMAT = "webnn-graph-json"
JSON_SUFFIX = ".webnn.json"
SUPPORTED_VERSIONS = (1, 2)
SUPPORTED_JSON_VERSIONS = (1, 2)

# -- reader limits (hostile input) ----------------------------------------------------------
MAX_NESTING = 32
MAX_NUMBER_CHARS = 400
MAX_TEXT_BYTES = 1 << 30
MAX_MANIFEST_BYTES = 256 << 20
DEFAULT_MAX_SCALAR_BYTES = 1 << 30

# -- data types and keywords ----------------------------------------------------------------
SHORT_DTYPES: dict[str, str] = {
    "float32": "f32", "float16": "f16", "int32": "i32", "uint32": "u32", "int64": "i64",
    "uint64": "u64", "int8": "i8", "uint8": "u8", "int4": "i4", "uint4": "u4",
}
LONG_DTYPES: dict[str, str] = {short: long for long, short in SHORT_DTYPES.items()}
UNSUPPORTED_DTYPES = ("int4", "uint4")
KEYWORDS = frozenset({"webnn_graph", "inputs", "consts", "nodes", "outputs", "true", "false",
                      "null", "dyn", "v", *SHORT_DTYPES.values()})

# -- operators and options ------------------------------------------------------------------
OPERAND_KEYS_ANY = frozenset({"scale", "bias", "c", "recurrentBias", "peepholeWeight",
                              "initialHiddenState", "initialCellState"})
"""Argument names whose value, when it names a declared value, is read as that operand."""
DTYPE_VALUE_KEYS = frozenset({"dataType", "outputDataType", "to"})
"""Arguments whose value is a data type name (short names such as `f32` are accepted)."""
LEGACY_OPTIONS = {"roundingType": "outputShapeRounding"}
"""Option names older producers write, mapped to the current spec names."""

__all__ = ["DEFAULT_MAX_SCALAR_BYTES", "DTYPE_VALUE_KEYS", "JSON_FORMAT", "JSON_SUFFIX",
           "KEYWORDS", "LEGACY_OPTIONS", "LONG_DTYPES", "MANIFEST_FORMAT", "MAX_MANIFEST_BYTES",
           "MAX_NESTING", "MAX_NUMBER_CHARS", "MAX_TEXT_BYTES",
           "OPERAND_KEYS_ANY", "SHORT_DTYPES", "SUPPORTED_JSON_VERSIONS", "SUPPORTED_VERSIONS",
           "UNSUPPORTED_DTYPES", "WEIGHTS_HEADER_BYTES", "WEIGHTS_MAGIC", "WEIGHTS_VERSION"]
