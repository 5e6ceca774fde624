"""Opening the files a user names (models, external data, graphs, weights, manifests, target
limits, .npz inputs): regular files only, read within a bound.

`open_regular(path, what)` opens with O_NONBLOCK (a FIFO does not wait for a writer) and
O_NOCTTY (a terminal does not become the controlling one), checks the OPEN descriptor with
fstat (no window between a check and the open: a name swapped for a FIFO after a stat is
still caught) and refuses anything that is not a regular file with one `NotRegularFile`
line: "m/x.webnn: the graph file is a FIFO, not a regular file". A FIFO, a character device
(`/dev/zero`, a terminal) or a socket would block forever or never end; their size (0) says
nothing of what they hold.

`read_bounded(path, limit, what)` reads a whole regular file of at most `limit` bytes;
`read_at(f, offset, length, path, what)` reads one range of an open file into a fresh,
writable array (`FileTruncated` when the file ends early: it was truncated after it was
opened). These copy what they read: nothing of a user's file is memory-mapped, so a file
truncated while it is read is a clean error, never a SIGBUS.

Restrictions: POSIX semantics (on Windows O_NONBLOCK / O_NOCTTY do not exist and are
left out); a symlink is followed (to a regular file it is fine; confinement to a folder is
`converter.core.confine`'s job).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

import numpy as np


class NotRegularFile(OSError):
    """A file the user named is a FIFO, device, socket or folder, not a regular file. An
    OSError (ENODEV... EINVAL) whose `strerror` says what it is and `filename` names it."""

    def __init__(self, path: str | os.PathLike[str], what: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{what} is {kind}, not a regular file", os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class FileTooLarge(OSError):
    """A file is larger than the bound its reader allows."""

    def __init__(self, path: str | os.PathLike[str], what: str, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{what} is larger than {limit} bytes", os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class FileTruncated(OSError):
    """A file ended before the bytes its reader was told it holds: it was truncated (or is
    being rewritten) while it was read."""

    def __init__(self, path: str | os.PathLike[str], what: str, offset: int, length: int,
                 got: int) -> None:
        super().__init__(errno.EIO, f"{what} ends early: bytes {offset}..{offset + length} "
                         f"expected, {got} read (truncated while it was read?)",
                         os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def kind_of(mode: int) -> str:
    """"a FIFO", "a character device", ... for a file's st_mode ("a regular file")."""
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "a special file"


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | \
    getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def open_regular(path: str | os.PathLike[str], what: str = "the file") -> BinaryIO:
    """`path` opened for reading in binary mode, refused (`NotRegularFile`) unless it is a
    regular file once opened; `what` names it in the message ("the weights file"). OSError
    as `open` raises it otherwise (FileNotFoundError, PermissionError, ...)."""
    try:
        fd = os.open(path, _FLAGS)
    except IsADirectoryError:
        raise NotRegularFile(path, what, "a folder") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, a FIFO opened O_NONBLOCK for writing
            raise NotRegularFile(path, what, "a special file") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, what, kind_of(mode))
        if _FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def check_regular(path: str | os.PathLike[str], what: str = "the file") -> Path:
    """`path` when it is a regular file (opened and checked as `open_regular` does);
    `NotRegularFile` / OSError otherwise. For callers that hand the path to a library that
    opens it itself (the name may change in between: prefer `open_regular`)."""
    with open_regular(path, what):
        return Path(path)


def read_bounded(path: str | os.PathLike[str], limit: int, what: str = "the file") -> bytes:
    """The whole regular file `path`, at most `limit` bytes (`FileTooLarge` beyond: at most
    limit + 1 bytes are read, whatever its size claims); `NotRegularFile` for a FIFO,
    device or folder."""
    with open_regular(path, what) as f:
        if os.fstat(f.fileno()).st_size > limit:
            raise FileTooLarge(path, what, limit)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(path, what, limit)
    return data


def read_regular(path: str | os.PathLike[str], what: str = "the file") -> bytes:
    """The whole regular file `path` (`open_regular`: `NotRegularFile` for a FIFO, device
    or folder), copied into memory, never mapped; `FileTruncated` when it ends before the
    size it had when opened (truncated while read: a cut protobuf may still parse)."""
    with open_regular(path, what) as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read()
    if len(data) < size:
        raise FileTruncated(path, what, 0, size, len(data))
    return data


def read_at(f: BinaryIO, offset: int, length: int, path: str | os.PathLike[str],
            what: str = "the file") -> bytearray:
    """`length` bytes of open file `f` from `offset` (`os.pread` into a fresh buffer, the
    file position untouched); `FileTruncated` when the file ends before them."""
    buf = bytearray(length)
    view = memoryview(buf)
    done = 0
    fd = f.fileno()
    while done < length:
        n = os.preadv(fd, [view[done:done + (1 << 30)]], offset + done) \
            if hasattr(os, "preadv") else _pread_into(fd, view[done:], offset + done)
        if n == 0:
            raise FileTruncated(path, what, offset, length, done)
        done += n
    return buf


def _pread_into(fd: int, view: memoryview, offset: int) -> int:
    chunk = os.pread(fd, min(len(view), 1 << 30), offset)
    view[:len(chunk)] = chunk
    return len(chunk)


def array_at(f: BinaryIO, offset: int, dtype: np.dtype, shape: tuple[int, ...],
             path: str | os.PathLike[str], what: str = "the file") -> np.ndarray:
    """The array of `dtype` and `shape` stored at `offset` of open file `f` (read as
    `read_at` reads, `FileTruncated` when the file ends early): read-only, over a buffer
    nothing else can write, so that the graph builder keeps it without a copy (as it kept
    the read-only memory maps these reads replace)."""
    count = int(np.prod(shape, dtype=np.int64))
    buf = read_at(f, offset, count * dtype.itemsize, path, what)
    return np.frombuffer(memoryview(buf).toreadonly(), dtype=dtype, count=count).reshape(shape)


__all__ = ["FileTooLarge", "FileTruncated", "NotRegularFile", "array_at", "check_regular",
           "kind_of", "open_regular", "read_at", "read_bounded", "read_regular"]
