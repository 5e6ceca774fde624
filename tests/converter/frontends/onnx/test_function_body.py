"""`function_body` finds the schema's function body even when the node's opset is older than
every body the schema defines (onnx returns b"" for that version, not None)."""

from __future__ import annotations

from types import MappingProxyType

import onnx
from onnx import helper

from converter.core.ir import Node
from converter.frontends.onnx.subgraph import function_body


def _node(op_type: str, version: int) -> Node:
    proto = helper.make_node(op_type, ["x"], ["y"])
    return Node(op_type, "", version, "n", ("x",), ("y",), MappingProxyType({}), 0, proto)


def test_body_defined_only_at_a_later_opset_is_used() -> None:
    schema = onnx.defs.get_schema("Softsign", 13)
    assert min(schema.function_opset_versions) > 13  # the case under test
    body = function_body(_node("Softsign", 13), {}, [("float32", (2, 3))])
    assert body is not None
    assert [n.op_type for n in body.node]  # a real body, not an empty FunctionProto
    assert len(body.output) == 1


def test_op_without_body_has_none() -> None:
    assert function_body(_node("Relu", 13), {}, [("float32", (2, 3))]) is None
