"""A `.tflite` file being read: its bytes with bounds-checked access for the reader's parts
(`reader`, `tensors`, `operators`).

Every vector length and buffer range is checked against the file size before it is read, so
a hostile file cannot make the reader allocate more than the file holds; failures are
`InvalidModel` errors naming the file. Arrays handed out are read-only (`read_only`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.budgets import active
from converter.core.errors import InvalidModel


class ModelFile:
    """The file's bytes (`data`, `size` bytes, named `label` in errors), the warnings
    collected while reading it and the budgets that bound derived constants. `buffers` are
    the model's `Buffer` tables (set once the model's root table is read)."""

    def __init__(self, data: Any, label: str) -> None:
        self.data = data
        self.size = len(data)
        self.label = label
        self.warnings: list[str] = []
        given = active()
        self.budgets = given if given.source_bytes is not None else given.for_source(self.size)
        """The active budgets, knowing the file's size (derived constants: densified
        sparse tensors, zero-filled variables are bounded relative to it)."""
        self.buffers: list[Any] = []
        self.buffer_cache: dict[int, np.ndarray | None] = {}

    def fail(self, message: str) -> InvalidModel:
        return InvalidModel(f"{self.label}: {message}")

    def count(self, n: int, what: str, elem: int = 4) -> int:
        """`n` when `n` entries of `elem` bytes fit in the file; InvalidModel otherwise."""
        if n < 0 or n * elem > self.size:
            raise self.fail(f"{what} claims {n} entries, more than the file can hold")
        return n

    def array(self, getter: Any, length: int, what: str, elem: int) -> np.ndarray:
        """A flatbuffers vector (`...AsNumpy`) of `length` entries of `elem` bytes; empty
        when the vector is absent."""
        self.count(length, what, elem)
        value: np.ndarray | int = getter()  # flatbuffers' `...AsNumpy()`: 0 when absent
        if isinstance(value, int):  # absent vector
            return np.zeros(0, np.int64)
        return value

    def buffer_bytes(self, index: int, what: str) -> np.ndarray | None:
        """uint8 view of a buffer's data (inline, or the `offset`/`size` form of files over
        2 GB, checked against the file length), or None when empty."""
        if index in self.buffer_cache:
            return self.buffer_cache[index]
        if not 0 <= index < len(self.buffers):
            raise self.fail(f"{what} refers to buffer {index}, the model has "
                            f"{len(self.buffers)}")
        buf = self.buffers[index]
        offset, size = int(buf.Offset()), int(buf.Size())
        out: np.ndarray | None
        if offset > 1:
            if size < 0 or offset + size > self.size:
                raise self.fail(f"buffer {index} ({what}) range offset={offset} size={size} "
                                f"lies outside the file ({self.size} bytes)")
            out = np.frombuffer(self.data, np.uint8, size, offset) if size else None
        else:
            n = self.count(buf.DataLength(), f"buffer {index}", 1)
            out = None if n == 0 else buf.DataAsNumpy()
        self.buffer_cache[index] = out
        return out


def read_only(arr: np.ndarray) -> np.ndarray:
    """`arr`, made read-only."""
    if arr.flags.writeable:
        arr.setflags(write=False)
    return arr
