"""Write an ONNX model without its whole serialized form in memory.

`onnx.save_model` serializes the model into one bytes object (as large as the model) before
writing it. `save_streamed(model, path)` writes the same message field by field: the
model's fields other than the graph, then the graph as one length-delimited field whose
body is the graph's other fields followed by its initializers, each serialized and written
on its own. The bytes differ from `SerializeToString()` only in field order (the graph last
in the model, the initializers last in the graph), which every protobuf reader accepts; the
parsed message is equal. Peak memory over the model itself: its largest initializer.
Models over protobuf's 2 GiB limit cannot be written so (use external data).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

import onnx

from converter.core.protobuf_wire import encode_varint

_LENGTH_DELIMITED = 2


def _tag(number: int) -> bytes:
    return encode_varint(number << 3 | _LENGTH_DELIMITED)


def _without(message: Any, field: str) -> Any:
    """A copy of `message` without `field` (the other fields copied, `field` not touched)."""
    copy = type(message)()
    for fd, value in message.ListFields():
        if fd.name == field:
            continue
        if fd.is_repeated:
            getattr(copy, fd.name).extend(value)
        elif fd.message_type is not None:
            getattr(copy, fd.name).CopyFrom(value)
        else:
            setattr(copy, fd.name, value)
    return copy


def _graph_layout(model: onnx.ModelProto) -> tuple[bytes, list[int], int]:
    """The graph's fields other than its initializers (serialized), the initializers' sizes
    and the size of the whole graph field's body."""
    graph = model.graph
    graph_head = _without(graph, "initializer").SerializeToString()
    number = graph.DESCRIPTOR.fields_by_name["initializer"].number
    sizes = [t.ByteSize() for t in graph.initializer]  # one tensor encoded at a time
    body = len(graph_head) + sum(len(_tag(number)) + len(encode_varint(n)) + n for n in sizes)
    return graph_head, sizes, body


def streamed_size(model: onnx.ModelProto) -> int:
    """The bytes `write_streamed(model, ...)` writes (`model.ByteSize()` encodes the whole
    model in memory with the upb protobuf runtime; this encodes one initializer at a
    time)."""
    size = len(_without(model, "graph").SerializeToString())
    if model.HasField("graph"):
        number = model.DESCRIPTOR.fields_by_name["graph"].number
        body = _graph_layout(model)[2]
        size += len(_tag(number)) + len(encode_varint(body)) + body
    return size


def write_streamed(model: onnx.ModelProto, stream: IO[bytes]) -> int:
    """Write `model` to `stream` (see the module docstring); returns the bytes written."""
    head = _without(model, "graph").SerializeToString()
    stream.write(head)
    written = len(head)
    if not model.HasField("graph"):
        return written
    graph = model.graph
    graph_head, sizes, body = _graph_layout(model)
    init_number = graph.DESCRIPTOR.fields_by_name["initializer"].number
    prefix = _tag(model.DESCRIPTOR.fields_by_name["graph"].number) + encode_varint(body)
    stream.write(prefix)
    stream.write(graph_head)
    written += len(prefix) + len(graph_head)
    for tensor, size in zip(graph.initializer, sizes, strict=True):
        prefix = _tag(init_number) + encode_varint(size)
        stream.write(prefix)
        data = tensor.SerializeToString()
        stream.write(data)
        written += len(prefix) + len(data)
        del data
    return written


def save_streamed(model: onnx.ModelProto, path: Path) -> None:
    """Write `model` to the file `path` (see the module docstring)."""
    with open(path, "wb") as f:
        write_streamed(model, f)


__all__ = ["save_streamed", "streamed_size", "write_streamed"]
