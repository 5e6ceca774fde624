"""The ONNX front end: reader (`reader`, with `inputs` and `node_order`), function/subgraph
expansion (`subgraph`), its part of the importer loop (`importer.ONNXFrontEnd`),
onnxruntime reference runs (`reference`) and `inspect` (`inspect`). Registering costs no
onnx import; `frontend` is the implementation module (`convert`, `import_source`)."""

from __future__ import annotations

from converter.frontends.base import Frontend, register
from converter.frontends.protobuf_sniff import is_text, protobuf_fields

MODEL_PROTO_FIELDS: dict[int, int] = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2,
                                      20: 2, 25: 2, 26: 2}
"""ModelProto's field numbers and their protobuf wire types (0 varint, 2 length-delimited):
ir_version, producer_name, producer_version, domain, model_version, doc_string, graph,
opset_import, metadata_props, training_info, functions, configuration."""

MAX_IR_VERSION = 100
"""Larger first varints are not taken for an IR version (ONNX 1.23 writes 12)."""


def looks_like_model_proto(head: bytes) -> bool:
    """Whether the first bytes of a file read as a serialized ModelProto: the first field is
    `ir_version` (a varint, 1 to `MAX_IR_VERSION`; protobuf writers emit fields in number
    order) and every other field seen is a ModelProto field of the right wire type, the
    producer name/version and domain being text. This tells ONNX models from other
    protobufs (TensorFlow GraphDefs start with a length-delimited field 1, SavedModels have
    a message where ONNX has the producer name). Restriction: a model without `ir_version`
    (invalid for onnx and onnxruntime) is not recognised by content."""
    fields = list(protobuf_fields(head))
    if not fields or fields[0][:2] != (1, 0):
        return False
    first = fields[0][2]
    if not isinstance(first, int) or not 1 <= first <= MAX_IR_VERSION:
        return False
    for number, wire, value in fields[1:]:
        if MODEL_PROTO_FIELDS.get(number) != wire:
            return False
        if number in (2, 3, 4) and isinstance(value, bytes) and not is_text(value):
            return False
    return True


def _sniff(head: bytes, suffix: str) -> bool:
    """A ModelProto by content (`looks_like_model_proto`), or the ``.onnx`` suffix (asked
    only after the content of the file matched no front end and no foreign kind: the
    reader then reports what is wrong with the file)."""
    return looks_like_model_proto(head) or suffix == ".onnx"


FRONTEND = register(Frontend(
    name="onnx", label="ONNX", reference="onnxruntime", version_unit="opset",
    suffixes=(".onnx",),
    options=frozenset({"free_dims", "input_dims", "input_shapes", "pin_inputs", "budgets"}),
    handlers="op_mappings.onnx", module="converter.frontends.onnx.frontend", sniff=_sniff,
    fallback=True))
