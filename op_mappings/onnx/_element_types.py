"""ONNX tensor element types (`TensorProto.DataType` numbers) as numpy-style dtype names, for
the handlers (Cast's `to`) and the ONNX front end (value types, initializers)."""

from __future__ import annotations

from onnx import TensorProto

from converter.core.errors import InvalidModel

ONNX_DTYPES: dict[int, str] = {
    TensorProto.FLOAT: "float32", TensorProto.FLOAT16: "float16",
    TensorProto.DOUBLE: "float64", TensorProto.BFLOAT16: "bfloat16",
    TensorProto.INT8: "int8", TensorProto.INT16: "int16", TensorProto.INT32: "int32",
    TensorProto.INT64: "int64", TensorProto.UINT8: "uint8", TensorProto.UINT16: "uint16",
    TensorProto.UINT32: "uint32", TensorProto.UINT64: "uint64", TensorProto.BOOL: "bool",
    TensorProto.STRING: "string",
}
"""The element types with a numpy dtype name."""


def elem_type_name(elem_type: int) -> str:
    """ONNX element type -> numpy-style dtype name ("float32", "bool", "bfloat16", ...; the
    lower-case ONNX name for types numpy lacks, e.g. "float8e4m3fn"); InvalidModel for a
    number that is no ONNX data type."""
    if elem_type in ONNX_DTYPES:
        return ONNX_DTYPES[elem_type]
    try:
        name: str = TensorProto.DataType.Name(elem_type)  # untyped in onnx's protobuf stubs
    except ValueError:
        raise InvalidModel(f"data type {elem_type} is not an ONNX data type") from None
    return name.lower()
