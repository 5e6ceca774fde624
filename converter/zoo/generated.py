"""Models the project generates itself: the `generated:` source scheme of the zoo manifests.

An entry `source = "generated:make_tiny_cnn.py"` (optionally `args = {seed = 1, ...}`) names
a generator script in the manifest's folder (converter/zoo/models/ for the shipped ones). The
script must define

```python
def make(path: Path, **args) -> None:  # write the model file to `path`, deterministically
```

`generate` imports the script by path as a module of its own, registered in `sys.modules`
under a name unique to its content and arguments (so `@dataclass` and pickling work in it;
it must be self-contained: no imports from tests/) and calls `make(path, **args)` once per
(script content, args, suffix): the file is cached under `$WEBNN_CONVERTER_CACHE/zoo`, else
`$XDG_CACHE_HOME/webnn-converter/zoo`, else `~/.cache/webnn-converter/zoo` (a temporary
folder when that is not writable), named
`<script stem>-<key><suffix>` where the key hashes the script's bytes and the arguments, so
an edited generator regenerates. Writes go to a temporary file renamed into place, so
concurrent readers (parallel zoo workers, pytest-xdist) never see a partial file.

Restrictions: the key covers the script's own bytes only (not modules it imports, nor the
versions of onnx / flatbuffers), so generators must be deterministic and self-contained.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SCHEME = "generated:"


def cache_dir() -> Path:
    """The folder generated models are cached in (created; see the module docstring)."""
    env = os.environ.get("WEBNN_CONVERTER_CACHE")
    if env:
        base = Path(env).expanduser() / "zoo"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
        base = root / "webnn-converter" / "zoo"
    try:
        base.mkdir(parents=True, exist_ok=True)
        if os.access(base, os.W_OK):
            return base
    except OSError:
        pass
    fallback = Path(tempfile.gettempdir()) / "webnn-converter-zoo"
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


def cache_key(script: Path, args: Mapping[str, Any], suffix: str) -> str:
    """16 hex digits of sha256(script bytes, canonical JSON of args, suffix)."""
    h = hashlib.sha256(script.read_bytes())
    h.update(json.dumps(dict(args), sort_keys=True, default=str).encode())
    h.update(suffix.encode())
    return h.hexdigest()[:16]


def _load(script: Path, key: str) -> Any:
    """Import generator `script` as module `_webnn_zoo_<stem>_<key>`, registered in
    sys.modules before its code runs (as an import does: `@dataclass`, pickling and
    `typing.get_type_hints` look the module up there); removed again when it fails."""
    name = f"_webnn_zoo_{script.stem}_{key}"
    spec = importlib.util.spec_from_file_location(name, script)
    if spec is None or spec.loader is None:
        raise ValueError(f"generator {str(script)!r} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    if not callable(getattr(module, "make", None)):
        raise ValueError(f"generator {script.name!r} defines no make(path, **args)")
    return module


def generate(script: str | Path, args: Mapping[str, Any] | None = None, suffix: str = ".onnx",
             folder: Path | None = None) -> Path:
    """The model file `script`'s `make(path, **args)` writes, generated on first use and
    cached (see the module docstring). Errors of the script propagate (ModuleNotFoundError
    for a missing dependency); ValueError when the script has no `make`."""
    script = Path(script)
    args = dict(args or {})
    key = cache_key(script, args, suffix)
    folder = folder or cache_dir()
    out = folder / f"{script.stem}-{key}{suffix}"
    if out.is_file():
        return out
    module = _load(script, key)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}-", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        module.make(Path(tmp), **args)
        if not Path(tmp).is_file() or Path(tmp).stat().st_size == 0:
            raise ValueError(f"generator {script.name!r} wrote nothing")
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


_PRELOADED: set[str] = set()


def preload(script: str | Path) -> None:
    """Import generator `script` in this process and call its optional `preload()` (which
    imports the generator's heavy dependencies), once per script content: a zoo worker does
    it before forking each model's child (`converter.zoo.cluster`), so the children share
    those imports instead of importing them again. Errors of the script propagate."""
    script = Path(script)
    key = hashlib.sha256(script.read_bytes()).hexdigest()[:16]
    if key in _PRELOADED:
        return
    module = _load(script, f"preload_{key}")
    hook = getattr(module, "preload", None)
    if callable(hook):
        hook()
    _PRELOADED.add(key)
