"""Protobuf wire-format pieces shared by the ONNX reader (splitting a model's fields without
parsing them) and the streamed `.onnx` writer."""

from __future__ import annotations


def encode_varint(value: int) -> bytes:
    """`value` (>= 0) as a protobuf base-128 varint."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
