"""The output folder of `export()`: its marker, its lock, its temporary folders.

- Marker `.webnn-converter.json` (`MARKER`): JSON with `generator` ("webnn-converter"),
  `version`, `files` (the names the last export wrote) and `checksums` (name -> `size`,
  `sha256`). A listed file counts as ours only while its size and SHA-256 still match: a
  file the user edited or put under a listed name makes the folder "not ours" (`--force`
  needed), so a plain export never deletes or overwrites content it did not write. Markers
  of older versions (no `checksums`) are therefore not trusted either. While files are being
  moved in, the marker has `"state": "replacing"` and also `incoming` (the checksums of the
  new files): a folder left so by `kill -9` is still recognised as ours.
- Lock: every change to the folder (sweep, creating a temporary folder, claim + replace,
  removal of a folder we created) happens under an exclusive `flock` on the folder itself
  (or, where the file system cannot lock a folder, on `.webnn-converter.lock` inside it), so
  two exports into one folder never mix: the last to replace wins, whole.
- Temporary folders `.webnn-converter.io.export-XXXX` (`TEMP_PREFIX`) are made INSIDE the
  output folder (its own file system, so the final renames never cross devices, e.g. when
  `-o` is a mount point). Each holds `TEMP_OWNER` (JSON: generator, pid), locked by its
  owner for its whole life; `sweep` removes every one whose owner lock is free (its process
  died: `kill -9`, power loss) and empty ones (a process killed while making one).

POSIX only (`fcntl`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

MARKER = ".webnn-converter.json"
"""The marker file of folders `export()` wrote (see the module docstring)."""
LOCK_FILE = ".webnn-converter.lock"
"""The lock file, made only where a folder itself cannot be locked (some network file
systems); it stays and counts as ours."""
TEMP_PREFIX = ".webnn-converter.io.export-"
"""The name prefix of the temporary folders `export()` makes inside the output folder."""
TEMP_OWNER = ".owner.json"
"""The file inside a temporary folder that its (live) owner holds locked."""
GENERATOR = "webnn-converter"


class ExportFolderError(OSError):
    """The output folder cannot be written (disk full, read-only, a dangling symlink, ...):
    one line naming the user's folder and the cause; `errno` is kept."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class FolderNotOurs(FileExistsError):
    """`export()` refused a non-empty folder that it did not write; `reason` says why (one
    line, without the folder name)."""

    reason: str = ""


@dataclass(frozen=True)
class FileRecord:
    """What the marker records of a file we wrote: its size and SHA-256 (hex)."""

    size: int
    sha256: str

    def to_json(self) -> dict[str, object]:
        return {"size": self.size, "sha256": self.sha256}


def file_record(path: Path) -> FileRecord:
    """The size and SHA-256 of the file `path` (read in 1 MiB blocks)."""
    with open(path, "rb") as f:
        digest = hashlib.file_digest(f, "sha256")
        size = f.tell()
    return FileRecord(size, digest.hexdigest())


def _matching(path: Path, records: tuple[FileRecord, ...], verify: bool
              ) -> FileRecord | None:
    """The record of `records` the regular file `path` (not a symlink) matches (by size
    only unless `verify`), or None."""
    try:
        st = path.lstat()
    except OSError:
        return None
    sized = [r for r in records if r.size == st.st_size]
    if not stat.S_ISREG(st.st_mode) or not sized:
        return None
    if not verify:
        return sized[-1]
    try:
        actual = file_record(path)
    except OSError:
        return None
    return actual if actual in sized else None


def _plain_name(name: object) -> bool:
    return (isinstance(name, str) and name not in ("", ".", "..", MARKER, LOCK_FILE)
            and "/" not in name and "\0" not in name and not name.startswith(TEMP_PREFIX))


def _records(value: object) -> dict[str, FileRecord]:
    out: dict[str, FileRecord] = {}
    if not isinstance(value, dict):
        return out
    for name, rec in value.items():
        if not _plain_name(name) or not isinstance(rec, dict):
            continue
        size, digest = rec.get("size"), rec.get("sha256")
        if (isinstance(size, int) and not isinstance(size, bool) and size >= 0
                and isinstance(digest, str) and len(digest) == 64):
            out[name] = FileRecord(size, digest.lower())
    return out


@dataclass(frozen=True)
class Marker:
    """A folder's marker as read: the listed names and, per name, the contents that make
    it ours (one record; two while a replacement was under way)."""

    files: frozenset[str]
    contents: Mapping[str, tuple[FileRecord, ...]]


def read_marker(folder: Path) -> Marker | None:
    """The marker of `folder` (None without a readable marker of ours)."""
    try:
        text = (folder / MARKER).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("generator") != GENERATOR:
        return None
    files = data.get("files")
    if not isinstance(files, list):
        return None
    names = frozenset(f for f in files if _plain_name(f))
    contents: dict[str, tuple[FileRecord, ...]] = {}
    for part in ("checksums", "incoming"):
        for name, rec in _records(data.get(part)).items():
            contents[name] = (*contents.get(name, ()), rec)
    return Marker(names, {n: contents[n] for n in names if n in contents})


def marker_text(records: Mapping[str, FileRecord],
                incoming: Mapping[str, FileRecord] | None = None) -> str:
    """The marker listing `records` (and, while replacing, `incoming` too)."""
    from converter.core.version import __version__

    data: dict[str, object] = {"generator": GENERATOR, "version": __version__}
    if incoming is not None:
        data["state"] = "replacing"
    data["files"] = sorted(set(records) | set(incoming or ()))
    data["checksums"] = {n: records[n].to_json() for n in sorted(records)}
    if incoming is not None:
        data["incoming"] = {n: incoming[n].to_json() for n in sorted(incoming)}
    return json.dumps(data, indent=2) + "\n"


def is_our_temp(path: Path) -> bool:
    """Whether `path` is a temporary folder of ours: named `TEMP_PREFIX...`, a real folder,
    empty or holding `TEMP_OWNER`."""
    if not path.name.startswith(TEMP_PREFIX) or path.is_symlink() or not path.is_dir():
        return False
    try:
        return (path / TEMP_OWNER).is_file() or not any(path.iterdir())
    except FileNotFoundError:
        return True  # removed meanwhile by its owner
    except OSError:
        return False


def claim(folder: Path, force: bool, shown: Path, *, verify: bool = True
          ) -> dict[str, FileRecord] | None:
    """Check that `export()` may write into `folder` (named `shown` in messages): None when
    it does not exist, else the records of the files of an earlier export there (removable
    when stale). Raises `FolderNotOurs` for a non-empty folder holding anything we did not
    write (a listed file whose content changed included), unless `force`; with `force` the
    marker's records are returned unchecked. `verify=False` compares sizes only (a quick
    early check). Our temporary folders, the marker and the lock file do not count."""
    if not folder.exists():
        if folder.is_symlink():
            raise ExportFolderError(errno.ENOENT, dangling(shown, folder))
        return None
    if not folder.is_dir():
        raise NotADirectoryError(f"export: {shown} exists and is not a folder")
    marker = read_marker(folder)
    mine: dict[str, FileRecord] = {}
    others: list[tuple[str, str]] = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        name = entry.name
        if name in (MARKER, LOCK_FILE) or is_our_temp(entry):
            continue
        if marker is None or name not in marker.files:
            others.append((name, "which webnn-converter did not write"))
            continue
        records = marker.contents.get(name, ())
        if not records:
            others.append((name, f"which {MARKER} lists without a checksum (written by an "
                                 "older webnn-converter or edited)"))
        elif force and len(records) == 1:
            mine[name] = records[0]  # kept in the marker unchecked: nothing is removed
        elif force:  # left by a killed replacement: old or new content
            if (found := _matching(entry, records, verify)) is not None:
                mine[name] = found
        elif (found := _matching(entry, records, verify)) is not None:
            mine[name] = found
        else:
            others.append((name, "which changed since webnn-converter wrote it (its size or "
                                 f"SHA-256 differs from the record in {MARKER})"))
    if others and not force:
        if marker is None:
            why = f"was not written by webnn-converter (no {MARKER} marker)"
        else:
            why = f"holds {others[0][0]!r}, {others[0][1]}"
        err = FolderNotOurs(f"export: {shown} is not empty and {why}; refusing to write "
                            "into it without force=True (CLI: --force)")
        err.reason = f"not empty and {why}"
        raise err
    return mine


def dangling(shown: Path, folder: Path) -> str:
    """The message for an output folder that is a symlink to nothing."""
    try:
        to = os.readlink(folder)
    except OSError:
        to = "?"
    return (f"export: {shown} is a symbolic link to {to}, which does not exist; create that "
            "folder or choose another output folder")


def _write_error(e: OSError, action: str) -> ExportFolderError:
    return ExportFolderError(e.errno or errno.EIO, f"export: cannot {action}: "
                             f"{e.strerror or e}")


@contextlib.contextmanager
def locked_folder(target: Path, shown: Path, dir_mode: int, create: bool = True
                  ) -> Iterator[bool]:
    """Hold the exclusive lock of the folder `target` (absolute), creating it (and its
    parents) when missing (FileNotFoundError then unless `create`); yields whether this
    call created it. Blocks while another export holds it."""
    created = False
    while True:
        if not target.exists() and create:
            if target.is_symlink():
                raise ExportFolderError(errno.ENOENT, dangling(shown, target))
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.mkdir(target, dir_mode)
                created = True
            except FileExistsError:
                pass
            except OSError as e:
                raise _write_error(e, f"create the folder {shown}") from None
        try:
            fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            if not create:
                raise
            continue  # removed meanwhile: make it again
        except NotADirectoryError:
            raise NotADirectoryError(f"export: {shown} exists and is not a folder") from None
        except OSError as e:
            raise _write_error(e, f"open the folder {shown}") from None
        lock_fd = fd
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:  # this file system cannot lock folders: a lock file instead
                try:
                    lock_fd = os.open(target / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
                                      | os.O_NOFOLLOW, 0o666)
                    fcntl.flock(lock_fd, fcntl.LOCK_EX)
                except OSError as e:
                    raise _write_error(e, f"lock the folder {shown}") from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(target))
            except OSError:
                same = False
            if not same:
                continue  # replaced or removed while we waited: lock the new one
            yield created
            return
        finally:
            if lock_fd != fd:
                os.close(lock_fd)
            os.close(fd)


def remove_if_created(target: Path, created: bool) -> None:
    """Remove the folder `target` if this export created it and it is empty (but for the
    lock file). Call with the folder's lock held."""
    if not created:
        return
    with contextlib.suppress(OSError):
        if [p.name for p in target.iterdir()] == [LOCK_FILE]:
            (target / LOCK_FILE).unlink()
        target.rmdir()


def sweep(folder: Path) -> list[Path]:
    """Remove the temporary folders of dead exports inside `folder` (see the module
    docstring); returns them. Call with the folder's lock held."""
    removed: list[Path] = []
    try:
        entries = [p for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX)]
    except OSError:
        return removed
    for path in entries:
        if not is_our_temp(path):
            continue
        owner = path / TEMP_OWNER
        try:
            fd = os.open(owner, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                path.rmdir()  # empty: its process died while making it
                removed.append(path)
            continue
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its owner lives
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


class TempFolder:
    """A temporary folder of ours inside `folder` (make it with the folder's lock held):
    `path`; `close()` removes it and releases its owner lock."""

    def __init__(self, folder: Path, shown: Path) -> None:
        try:
            self.path = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=folder))
        except OSError as e:
            raise _write_error(e, f"write into {shown}") from None
        try:
            self._fd = os.open(self.path / TEMP_OWNER, os.O_RDWR | os.O_CREAT | os.O_EXCL
                               | os.O_CLOEXEC, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            os.write(self._fd, json.dumps({"generator": GENERATOR,
                                           "pid": os.getpid()}).encode() + b"\n")
        except OSError as e:
            shutil.rmtree(self.path, ignore_errors=True)
            raise _write_error(e, f"write into {shown}") from None

        self._closed = False

    def files(self) -> list[str]:
        """The names written into the folder (its owner file left out)."""
        return sorted(p.name for p in self.path.iterdir() if p.name != TEMP_OWNER)

    def close(self) -> None:
        """Remove the folder (again: a no-op)."""
        if self._closed:
            return
        self._closed = True
        try:
            entries = list(self.path.iterdir())
        except OSError:
            entries = []
        for p in entries:
            if p.name != TEMP_OWNER:
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        p.unlink()
        with contextlib.suppress(OSError):
            (self.path / TEMP_OWNER).unlink()
        with contextlib.suppress(OSError):
            self.path.rmdir()
        os.close(self._fd)


def _write_file(path: Path, text: str, mode: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT/SIGTERM (and SIGHUP) wait until the block ends (the few renames of a
    replacement are not cut in the middle)."""
    sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def replace(target: Path, shown: Path, tmp: TempFolder, previous: Mapping[str, FileRecord],
            force: bool, file_mode: int) -> dict[str, FileRecord]:
    """Move the files of `tmp` into `target` (named `shown` in messages; with the folder's
    lock held): the marker first (state "replacing", listing old and new files), then each
    file by an atomic rename, then (unless `force`) the previous export's files this one did
    not write are removed, and the final marker goes in. Both markers are written into `tmp`
    first, so this step writes no data into `target` (a full disk cannot stop it half-way).
    With `force`, the previous records are kept (nothing is removed). Returns the final
    records; `ExportFolderError` names `shown` (and says whether anything was moved)."""
    try:
        files = tmp.files()
        new = {n: file_record(tmp.path / n) for n in files}
        final = dict(new) if not force else {**{n: r for n, r in previous.items()
                                                if (target / n).exists()}, **new}
        staging, done = tmp.path / f"{MARKER}.replacing", tmp.path / MARKER
        _write_file(staging, marker_text(previous, new), file_mode)
        _write_file(done, marker_text(final), file_mode)
    except OSError as e:
        raise ExportFolderError(e.errno or errno.EIO, f"export: cannot write the marker "
                                f"{MARKER} into {shown}: {e.strerror or e}; the folder was "
                                "left as it was") from None
    try:
        with signals_deferred():
            os.replace(staging, target / MARKER)
            for n in files:
                os.replace(tmp.path / n, target / n)
            if not force:
                for stale in sorted(set(previous) - set(new)):
                    with contextlib.suppress(FileNotFoundError):
                        (target / stale).unlink()
            os.replace(done, target / MARKER)
    except OSError as e:
        raise ExportFolderError(e.errno or errno.EIO, f"export: cannot move the files into "
                                f"{shown}: {e.strerror or e}; its marker lists what is there "
                                "(the next export replaces it)") from None
    return final


__all__ = ["LOCK_FILE", "MARKER", "TEMP_OWNER", "TEMP_PREFIX", "ExportFolderError",
           "FileRecord", "FolderNotOurs", "Marker", "TempFolder", "claim", "file_record",
           "is_our_temp", "locked_folder", "marker_text", "read_marker", "remove_if_created",
           "replace", "sweep"]
