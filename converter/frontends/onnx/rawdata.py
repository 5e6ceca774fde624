"""Zero-copy initializer data: a serialized ONNX ModelProto split into a skeleton (the same
model without the `raw_data` bytes of its large numeric initializers) and read-only views of
those bytes where they lie (the file's memory map, or the bytes given), so that reading a
model parses and copies its structure only, never its weights.

`split_raw_data(buf)` walks the protobuf wire format just deep enough: the ModelProto's
`graph` field (7), the GraphProto's `initializer` fields (5), each TensorProto's `dims` (1),
`data_type` (2), `raw_data` (9) and `data_location` (14). A tensor gives up its raw_data when
the data is inline (not external), of a plain numeric type (`VIEW_TYPES`: numpy reads it
with `frombuffer`, as `onnx.numpy_helper` does) and at least `min_bytes` long. Everything
else (nodes, inputs, functions, small or other-typed tensors, subgraph and sparse
initializers) is copied into the skeleton unchanged, so parsing the skeleton gives the model
with those tensors' raw_data unset. `tensor_view` makes the array of such a tensor from its
view, checking the byte count against dims and type.

Restrictions: anything the walk does not expect (a truncated or malformed field, the graph
field given twice, a tensor with two raw_data fields, dims that do not decode) makes
`split_raw_data` return None: the caller then parses the whole buffer as before (and reports
what is wrong with it). Little-endian hosts read the views as they are (a big-endian host
byte-swaps, copying). Views of a file's memory map share its pages as external data does:
the file must not be rewritten in place (truncated) while a graph converted from it is in
use; replacing or deleting it is safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from converter.core.errors import InvalidModel, quoted
from converter.core.protobuf_wire import encode_varint

MIN_BYTES = 1024
"""Tensors with fewer raw_data bytes stay in the skeleton (a view costs more than a copy)."""

VIEW_TYPES: dict[int, str] = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
                              6: "int32", 7: "int64", 10: "float16", 11: "float64",
                              12: "uint32", 13: "uint64"}
"""ONNX element types whose raw_data numpy reads as it is (little-endian), by number."""

_GRAPH, _INITIALIZER = 7, 5
_DIMS, _DATA_TYPE, _RAW_DATA, _DATA_LOCATION = 1, 2, 9, 14


@dataclass(frozen=True)
class SplitModel:
    """A serialized ModelProto without the raw_data of its large initializers.

    `skeleton`: the model's bytes with those raw_data fields left out; `views`: initializer
    position (among the graph's `initializer` entries, in file order) -> the bytes of its
    raw_data (a read-only memoryview into the buffer given to `split_raw_data`)."""

    skeleton: bytes
    views: dict[int, memoryview]


class _Malformed(Exception):
    """The bytes are not what the walk expects (the caller falls back to a full parse)."""


def _varint(buf: memoryview, pos: int, end: int) -> tuple[int, int]:
    if pos < end:
        byte = buf[pos]
        if byte < 0x80:  # one byte: most keys and lengths
            return byte, pos + 1
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Malformed
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(buf: memoryview, start: int, end: int
            ) -> list[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, payload start, field end) of every field of
    the message in buf[start:end]; a length-delimited payload is buf[payload start:field
    end], a varint's value starts at payload start."""
    out = []
    pos = start
    while pos < end:
        key = buf[pos]
        if key < 0x80:  # (_varint, inlined for the usual one-byte key)
            body = pos + 1
        else:
            key, body = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _Malformed
        if wire == 2:
            length = buf[body] if body < end else 0x80
            if length < 0x80:
                body += 1
            else:
                length, body = _varint(buf, body, end)
            stop = body + length
        elif wire == 0:
            _, stop = _varint(buf, body, end)
        elif wire in (1, 5):
            stop = body + (8 if wire == 1 else 4)
        else:  # groups (3, 4) and invalid wire types
            raise _Malformed
        if stop > end:
            raise _Malformed
        out.append((number, wire, pos, body, stop))
        pos = stop
    return out


def _dims(buf: memoryview, wire: int, body: int, stop: int) -> list[int]:
    """The int64 values of one `dims` field (packed or not)."""
    if wire == 0:
        return [_varint(buf, body, stop)[0]]
    if wire != 2:
        raise _Malformed
    values, pos = [], body
    while pos < stop:
        value, pos = _varint(buf, pos, stop)
        values.append(value)
    return values


def _tensor(buf: memoryview, start: int, end: int, min_bytes: int
            ) -> tuple[int, int] | None:
    """The (start, end) of the raw_data field (tag included) of the TensorProto in
    buf[start:end] when it should become a view, else None."""
    raw: list[tuple[int, int, int]] = []
    data_type = 0
    external = False
    for number, wire, field_start, body, stop in _fields(buf, start, end):
        if number == _RAW_DATA and wire == 2:
            raw.append((field_start, body, stop))
        elif number == _DATA_TYPE and wire == 0:
            data_type = _varint(buf, body, stop)[0]
        elif number == _DATA_LOCATION and wire == 0:
            external = _varint(buf, body, stop)[0] == 1
        elif number == _DIMS:
            _dims(buf, wire, body, stop)  # dims that do not decode: a full parse says why
    if len(raw) != 1 or external or data_type not in VIEW_TYPES:
        return None
    field_start, body, stop = raw[0]
    if stop - body < min_bytes:
        return None
    return field_start, stop


def _length_field(number: int, payload: list[bytes | memoryview]) -> list[bytes | memoryview]:
    size = sum(len(p) for p in payload)
    return [encode_varint(number << 3 | 2), encode_varint(size), *payload]


def split_raw_data(data: bytes | memoryview, min_bytes: int = MIN_BYTES) -> SplitModel | None:
    """The skeleton and raw_data views of serialized ModelProto `data` (see the module
    docstring); None when no initializer gives up its data or the bytes are not what the
    walk expects."""
    buf = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
    if buf.ndim != 1 or buf.itemsize != 1:
        buf = buf.cast("B")
    try:
        top = _fields(buf, 0, len(buf))
        graphs = [f for f in top if f[0] == _GRAPH]
        if len(graphs) != 1 or graphs[0][1] != 2:
            return None
        _, _, g_field, g_body, g_stop = graphs[0]
        graph: list[bytes | memoryview] = []
        views: dict[int, memoryview] = {}
        ordinal = 0
        copied = g_body  # graph bytes before this position are in `graph` already
        for number, wire, field_start, body, stop in _fields(buf, g_body, g_stop):
            if number != _INITIALIZER or wire != 2:
                continue
            found = _tensor(buf, body, stop, min_bytes)
            if found is not None:
                raw_start, raw_stop = found
                graph.append(buf[copied:field_start])
                graph += _length_field(_INITIALIZER, [buf[body:raw_start], buf[raw_stop:stop]])
                views[ordinal] = _raw_payload(buf, raw_start, raw_stop)
                copied = stop
            ordinal += 1
    except _Malformed:
        return None
    if not views:
        return None
    graph.append(buf[copied:g_stop])
    parts = [buf[:g_field], *_length_field(_GRAPH, graph), buf[g_stop:]]
    return SplitModel(b"".join(parts), views)


def _raw_payload(buf: memoryview, start: int, stop: int) -> memoryview:
    """The payload of the length-delimited field in buf[start:stop] (its tag and length
    skipped)."""
    _, body = _varint(buf, start, stop)
    _, body = _varint(buf, body, stop)
    return buf[body:stop].toreadonly()


def tensor_view(name: str, data_type: int, dims: list[int], view: memoryview,
                label: str) -> np.ndarray:
    """The read-only array of a tensor whose raw_data is `view` (no copy on little-endian
    hosts); InvalidModel when the byte count does not match dims and type."""
    dtype = np.dtype(VIEW_TYPES[data_type]).newbyteorder("<")
    shape = tuple(int(d) for d in dims)
    if any(d < 0 for d in shape):
        raise InvalidModel(f"{label}: tensor {quoted(name)} has a negative dimension in "
                           f"{list(shape)}")
    count = math.prod(shape)
    if count * dtype.itemsize != len(view):
        raise InvalidModel(f"{label}: tensor {quoted(name)} cannot be decoded: raw_data has "
                           f"{len(view)} bytes, {list(shape)} {VIEW_TYPES[data_type]} needs "
                           f"{count * dtype.itemsize}")
    arr = np.frombuffer(view, dtype).reshape(shape)
    return arr if dtype.isnative else arr.astype(dtype.newbyteorder("="))
