"""Values that break readers, and the byte-level mutators every kind falls back on."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from tools.fuzz.case import CANARY_TOKEN

# A name that breaks out of a <script> block: `gather` flags generated pages containing it.
HTML_MARK = "</script><b id=webnn-fuzz>x"
INTS = [0, -1, 1, 2, -2, 3, 7, 255, 256, 65535, 65536, 2**31 - 1, 2**31, -2**31, 2**32,
        2**32 + 1, 2**40, 2**53 + 1, 2**62, 2**63 - 1, -2**63, 10**6, 10**9]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, 1e-38, 3.4e38, 1e39, -1e39, 1e308,
          float("inf"), float("-inf"), float("nan")]
EVIL_STRINGS = [
    "", " ", "a\nb", "line1\r\nline2", "x\rY", "tab\there", "nul\x00byte", "bell\x07",
    "esc\x1b[31mred\x1b[0m", "ls\u2028sep", "ps\u2029sep", "nel\x85", "bidi\u202eevil",
    "zw\u200bspace", "emoji\U0001F4A5", "quote\"'`", "back\\slash", "{}[]();,=", "../../x",
    "/abs/path", "%s%n%x", "$(id)", "x" * 5000, "\ufeffbom", "é",
    HTML_MARK, "${globalThis.fuzz}", "`tick`", "*/ /*", "\\u2028", "a'+'b", "\"};x={\"",
    "1abc", "class", "__proto__", "constructor",
]
EVIL_BYTES = [b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x00" * 4, b"\x80abc"]


def evil_string(rng: random.Random) -> str:
    return rng.choice(EVIL_STRINGS)


def evil_value(rng: random.Random, old: Any = None) -> Any:
    """A JSON value that breaks readers: wrong types, huge or odd numbers, evil strings, and
    variants of `old` (its type changed, off by one, repeated)."""
    choices: list[Any] = [None, True, False, 0, -1, 2**31, 2**53 + 1, 2**63, 2**64 + 1,
                          10**400, 1.5, -0.0, evil_float(rng), "", evil_string(rng), [], {},
                          [1] * 1000, {"a": {"b": {"c": []}}}]
    if isinstance(old, int) and not isinstance(old, bool):
        choices += [str(old), float(old), old + 1, -old, evil_int(rng, old)]
    if isinstance(old, str):
        choices += [old.upper(), old + "\n", old * 100, [old], 1]
    if isinstance(old, list):
        choices += [old * 50, old[:-1], old + old, [evil_int(rng) for _ in old] or [-1]]
    return rng.choice(choices)


def evil_int(rng: random.Random, near: int | None = None, bits: int = 64) -> int:
    """An extreme or off-by-one integer that fits a signed `bits`-bit field."""
    if near is not None and rng.random() < 0.3:
        value = rng.choice([near - 1, near + 1, -near, near * 1024, 0])
    else:
        value = rng.choice(INTS)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return min(max(value, lo), hi)


def evil_float(rng: random.Random) -> float:
    return rng.choice(FLOATS)


def canary_paths() -> list[str]:
    """External-file references that point at the canary outside the model folder."""
    return ["../canary.bin", CANARY_TOKEN, "./../canary.bin", "sub/../../canary.bin",
            "..//canary.bin", "link.bin", "dirlink/canary.bin"]


# -- bytes ----------------------------------------------------------------------------------


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\x00"
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4, 8, 32])):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def set_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\xff"
    buf = bytearray(data)
    width = rng.choice([1, 2, 4, 8])
    i = rng.randrange(len(buf))
    value = rng.choice([0, 0xFF, 0x7F, 0x80, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000,
                        rng.randrange(256)])
    chunk = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    buf[i:i + width] = chunk[:len(buf) - i]
    return bytes(buf)


def truncate(data: bytes, rng: random.Random) -> bytes:
    if len(data) <= 1:
        return b""
    return data[:rng.choice([0, 1, 4, 8, len(data) // 2, rng.randrange(len(data)),
                             len(data) - 1])]


def insert_bytes(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    blob = rng.choice([b"\x00", b"\xff" * 8, bytes(rng.randrange(256) for _ in range(16)),
                       rng.choice(EVIL_BYTES)])
    return data[:i] + blob + data[i:]


def delete_chunk(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 2:
        return data
    i = rng.randrange(len(data))
    n = rng.choice([1, 4, 16, max(1, len(data) // 8)])
    return data[:i] + data[i + n:]


def duplicate_chunk(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    n = rng.choice([4, 16, 64, 256])
    return data[:i] + data[i:i + n] * rng.choice([2, 3, 100]) + data[i + n:]


def append_garbage(data: bytes, rng: random.Random) -> bytes:
    return data + rng.choice([b"\x00" * 16, b"garbage", data[:64], b"\xff" * 1024])


BYTE_MUTATORS: list[tuple[str, Callable[[bytes, random.Random], bytes]]] = [
    ("bytes.flip", flip_bits), ("bytes.set", set_bytes), ("bytes.truncate", truncate),
    ("bytes.insert", insert_bytes), ("bytes.delete", delete_chunk),
    ("bytes.duplicate", duplicate_chunk), ("bytes.append", append_garbage),
]


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    name, fn = rng.choice(BYTE_MUTATORS)
    return fn(data, rng), name
