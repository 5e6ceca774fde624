"""Folder confinement of the files a model refers to.

A model or graph file may name other files: ONNX external data (`location`), the weights,
manifest and `.safetensors` files found next to a `.webnn` / `.webnn.json` graph, the graph
file found in a folder given to `load()`. Every reader resolves such a path (symlinks
included, the file itself too) and refuses it unless it lies inside the model's folder
(`PathOutsideFolder`, one line naming the file, where it resolves to and the rule). A
relative location from inside a model must not be absolute nor contain `..`.

More folders can be trusted for one call: `convert(..., allow_roots=[DIR])`,
`validate(...)`, `inspect_model(...)`, `load(...)` (`--allow-root DIR` on the command line)
set them with `allowed_roots(...)`, a context variable the readers consult through
`confined()`. Files the caller names itself (the model path, `load(weights_path=...)`) are
not confined.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path, PurePosixPath, PureWindowsPath

from converter.core.errors import PathOutsideFolder, quoted

_ROOTS: ContextVar[tuple[Path, ...]] = ContextVar("webnn_converter_allowed_roots",
                                                  default=())


@contextmanager
def allowed_roots(roots: Iterable[str | os.PathLike[str]] | str | os.PathLike[str] | None
                  ) -> Iterator[None]:
    """Within the block, files inside `roots` (folders, resolved now) are allowed as well as
    the model's folder (one path counts as a list of one). Nested blocks add to the outer
    ones."""
    if isinstance(roots, (str, os.PathLike)):
        roots = [roots]
    extra = tuple(Path(r).resolve() for r in (roots or ()))
    token = _ROOTS.set(_ROOTS.get() + extra)
    try:
        yield
    finally:
        _ROOTS.reset(token)


def current_roots() -> tuple[Path, ...]:
    """The extra folders allowed now (resolved)."""
    return _ROOTS.get()


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


def confined(path: str | os.PathLike[str], folder: str | os.PathLike[str], what: str,
             name: str | None = None) -> Path:
    """`path` resolved (symlinks followed), when it lies inside `folder` (resolved) or a
    folder allowed by `allowed_roots`; `PathOutsideFolder` otherwise. `what` says what the
    file is in the message ("the weights file"), `name` how the model names it (default:
    `path`)."""
    root = Path(folder).resolve()
    target = Path(path).resolve()
    if _inside(target, root) or any(_inside(target, r) for r in current_roots()):
        return target
    shown = os.fspath(path) if name is None else name
    raise PathOutsideFolder(
        f"{what} {quoted(shown)} resolves to {quoted(str(target))}, outside the model's "
        f"folder {quoted(str(root))} (a symlink or a path leaving the folder)")


def check_relative(location: str, what: str) -> None:
    """`PathOutsideFolder` unless `location` (a path stored in a model) is relative and has
    no `..` component."""
    posix, windows = PurePosixPath(location), PureWindowsPath(location)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or location.startswith(
            ("/", "\\")):
        raise PathOutsideFolder(f"{what} {quoted(location)} is an absolute path; only files "
                                "inside the model's folder are read")
    if ".." in posix.parts or ".." in windows.parts:
        raise PathOutsideFolder(f"{what} {quoted(location)} leaves the model's folder "
                                "('..'); only files inside it are read")


__all__ = ["allowed_roots", "check_relative", "confined", "current_roots"]
