"""Recognising protobuf messages by their first bytes, without a schema or a protobuf
library: `protobuf_fields` walks the top-level fields of a (possibly truncated) message,
`is_text` tells text payloads, and the TensorFlow GraphDef / SavedModel shapes that
`converter.frontends.foreign` reports are told apart by their first fields. Nothing is
parsed beyond what a shape check needs."""

from __future__ import annotations

import re
from collections.abc import Iterator

_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _varint(buf: bytes, pos: int) -> tuple[int, int] | None:
    value = shift = 0
    while pos < len(buf) and shift < 64:
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None


def protobuf_fields(buf: bytes, limit: int = 64) -> Iterator[tuple[int, int, int | bytes]]:
    """The top-level fields of protobuf message bytes `buf` (possibly a truncated prefix):
    (field number, wire type, value), the value an int for varint/fixed fields and the
    (possibly truncated) payload bytes for length-delimited ones. Stops at the end of `buf`,
    after `limit` fields, or at bytes that are not a field (a group, wire type 6/7, field
    number 0), after yielding (0, -1, 0) for the latter."""
    pos = 0
    for _ in range(limit):
        if pos >= len(buf):
            return
        tag = _varint(buf, pos)
        if tag is None:
            return
        key, pos = tag
        number, wire = key >> 3, key & 7
        if number == 0 or wire not in (0, 1, 2, 5):
            yield 0, -1, 0
            return
        if wire == 0:
            item = _varint(buf, pos)
            if item is None:
                return
            value, pos = item
            yield number, wire, value
        elif wire == 2:
            item = _varint(buf, pos)
            if item is None:
                return
            length, pos = item
            yield number, wire, buf[pos:pos + length]
            pos += length
        else:
            size = 8 if wire == 1 else 4
            if pos + size > len(buf):
                return
            yield number, wire, int.from_bytes(buf[pos:pos + size], "little")
            pos += size


def is_text(data: bytes, allow_newlines: bool = False) -> bool:
    """Whether `data` (possibly cut in the middle of a character) reads as UTF-8 text without
    control characters (tabs, and with `allow_newlines` newlines, allowed)."""
    if _CONTROL.search(data) or (not allow_newlines and (b"\n" in data or b"\r" in data)):
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3 and exc.reason == "unexpected end of data"
    return True


def _message(buf: bytes, schema: dict[int, int], limit: int = 64
             ) -> list[tuple[int, int, int | bytes]] | None:
    """The fields of `buf` when each has a number and wire type of `schema`, else None."""
    fields = list(protobuf_fields(buf, limit))
    if not fields or any(schema.get(n) != w for n, w, _ in fields):
        return None
    return fields


_GRAPHDEF = {1: 2, 2: 2, 3: 0, 4: 2}  # node, library, version (deprecated), versions
_NODEDEF = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2}  # name, op, input, device, attr, ...
_SAVED_MODEL = {1: 0, 2: 2}  # saved_model_schema_version, meta_graphs


def looks_like_graphdef(buf: bytes) -> bool:
    """Whether `buf` (a file's first bytes) reads as a TensorFlow GraphDef: node fields
    whose first NodeDef names itself (and its op) in text."""
    fields = _message(buf, _GRAPHDEF, limit=256)
    if fields is None or fields[0][0] != 1:
        return False
    node = fields[0][2]
    assert isinstance(node, bytes)
    inner = _message(node, _NODEDEF)
    if inner is None:
        return False
    strings = {n: v for n, _, v in inner if n in (1, 2) and isinstance(v, bytes)}
    # a complete NodeDef names its op; a truncated prefix may show only the name
    if 1 not in strings or not strings[1] or not is_text(strings[1]):
        return False
    return 2 not in strings or is_text(strings[2])


def looks_like_saved_model(buf: bytes) -> bool:
    """Whether `buf` (a file's first bytes) reads as a TensorFlow SavedModel: schema
    version 1, then a MetaGraphDef message."""
    fields = _message(buf, _SAVED_MODEL, limit=4)
    if fields is None or fields[0][:2] != (1, 0) or fields[0][2] != 1 or len(fields) < 2:
        return False
    meta = fields[1][2]
    # MetaGraphDef: meta_info_def (1), graph_def (2), saver_def (3), ... all messages
    return isinstance(meta, bytes) and meta[:1] in (b"\x0a", b"\x12", b"\x1a", b"\x22")
