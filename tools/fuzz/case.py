"""A fuzz case: the files of one mutant, the command that runs it, and how it is laid out on
disk for a run (and saved as a reproducer).

Run folder layout (`materialize`), the working directory of the CLI run:

    R/canary.bin   a file OUTSIDE the model folder that no run may read (see `CANARY_*`)
    R/m/           the model folder: the case's `files`, `links` (symlinks) and `fifos`
    R/<aux>        auxiliary files (the inputs .npz of `run`)
    R/out, R/out.npz   where `convert -o` / `run -o` write

Paths in `argv` are relative to R (`m/tiny_cnn.onnx`, `-o out`), so messages are the same
from run to run. A mutant that wants the canary's absolute path writes `CANARY_TOKEN`, a
fixed-length placeholder that `materialize` replaces by the real path padded to the same
length with `./` components (so protobuf / flatbuffer length prefixes stay valid); a symlink
whose target is `{canary}` points at the canary's absolute path.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CANARY_NAME = "canary.bin"
CANARY_BYTES = 64 * 1024
CANARY_TOKEN = "/@@webnn-fuzz-canary@@/" + "@" * 137  # 160 characters
CANARY_LINK = "{canary}"
MODEL_DIR = "m"


def canary_content() -> bytes:
    """64 KiB of float32 values in [-1, 1) (no NaN, so a reader that copies them as weights
    copies them bit for bit), the same for every run."""
    import numpy as np

    rng = np.random.default_rng(0xCA7A)
    return rng.uniform(-1.0, 1.0, CANARY_BYTES // 4).astype("<f4").tobytes()


def padded_path(path: str, length: int) -> str:
    """`path` (absolute) spelled with exactly `length` characters: `./` components after the
    first directory, and one doubled slash when the difference is odd."""
    extra = length - len(path)
    if extra < 0:
        raise ValueError(f"{path!r} is longer than the canary token ({length} characters)")
    head, sep, tail = path[1:].partition("/")
    if not sep:
        raise ValueError(f"{path!r}: expected a file in a folder")
    pad = "./" * (extra // 2) + ("/" if extra % 2 else "")
    return f"/{head}/{pad}{tail}"


@dataclass
class Case:
    """One mutant. `files` are relative to the model folder (`m/`); `aux` to the run folder."""

    index: int
    kind: str                     # the kind of the mutated file (see mutators.KINDS)
    seed: str                     # the seed's name
    target: str                   # the mutated file (in `files`)
    argv: list[str]               # the CLI arguments (after `webnn-convert`)
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)   # name -> target (or `{canary}`)
    fifos: list[str] = field(default_factory=list)
    aux: dict[str, bytes] = field(default_factory=dict)
    mutators: list[str] = field(default_factory=list)

    @property
    def command(self) -> str:
        return self.argv[0] if self.argv else ""

    # -- on disk --------------------------------------------------------------------------

    def materialize(self, run_dir: Path) -> Path:
        """Lay the case out in the (empty or absent) folder `run_dir`; returns the canary."""
        run_dir.mkdir(parents=True, exist_ok=True)
        canary = run_dir / CANARY_NAME
        canary.write_bytes(canary_content())
        os.utime(canary, (0, 0))  # atime before mtime: a read updates it even with relatime
        real = padded_path(str(canary.absolute()), len(CANARY_TOKEN)).encode()
        token = CANARY_TOKEN.encode()
        model_dir = run_dir / MODEL_DIR
        model_dir.mkdir(exist_ok=True)
        for name, data in self.files.items():
            path = model_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data.replace(token, real))
        for name, target in self.links.items():
            path = model_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink() or path.exists():
                path.unlink()
            os.symlink(str(canary.absolute()) if target == CANARY_LINK else target, path)
        for name in self.fifos:
            path = model_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                path.unlink()
            os.mkfifo(path)
        for name, data in self.aux.items():
            (run_dir / name).write_bytes(data)
        return canary

    def save(self, folder: Path) -> None:
        """Write the case to `folder` (case.json + files/ + aux/), readable by `load`."""
        folder.mkdir(parents=True, exist_ok=True)
        for sub, items in (("files", self.files), ("aux", self.aux)):
            for name, data in items.items():
                path = folder / sub / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        meta = {k: v for k, v in asdict(self).items() if k not in ("files", "aux")}
        meta["files"] = sorted(self.files)
        meta["aux"] = sorted(self.aux)
        (folder / "case.json").write_text(json.dumps(meta, indent=2) + "\n")

    @classmethod
    def load(cls, folder: Path) -> Case:
        meta: dict[str, Any] = json.loads((folder / "case.json").read_text())
        files = {n: (folder / "files" / n).read_bytes() for n in meta.pop("files")}
        aux = {n: (folder / "aux" / n).read_bytes() for n in meta.pop("aux")}
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in meta.items() if k in known}, files=files, aux=aux)

    def replace_target(self, data: bytes) -> Case:
        """A copy with the mutated file's bytes replaced (minimisation)."""
        files = dict(self.files)
        files[self.target] = data
        return Case(self.index, self.kind, self.seed, self.target, list(self.argv), files,
                    dict(self.links), list(self.fifos), dict(self.aux), list(self.mutators))


def case_rng(campaign_seed: int, index: int) -> random.Random:
    """The random generator of case `index`: independent of the others (any case can be
    regenerated alone, whatever --jobs)."""
    return random.Random(f"webnn-fuzz:{campaign_seed}:{index}")
