"""The real-world suite's rows (models/realworld.toml) and what the tests do with each: find
the generated model in the cache folder, check that a conversion without flags fails with
exactly the row's flags as its hint (or converts when the row has none), validate with them.

The models are made by models/make_realworld.py (docs/realworld.md) into
`$WEBNN_REALWORLD_DIR`, default `~/.cache/webnn-converter/realworld`; a row whose model is
not there is skipped with the command that makes it. Nothing is downloaded or generated here
(the generator needs torch, torchvision and litert-torch, which this venv does not have).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "models" / "realworld.toml"
MAKE = "python models/make_realworld.py (with torch, torchvision, litert-torch: docs/realworld.md)"


@dataclass(frozen=True)
class Row:
    """One manifest row, as the tests use it."""

    name: str
    kind: str
    path: Path
    flags: tuple[str, ...]
    atol: float | None
    rtol: float | None
    browser: bool = True
    detection: bool = False
    known_gap: str = ""
    notes: str = ""
    table: Mapping[str, Any] = field(default_factory=dict)

    @property
    def free_dims(self) -> dict[str, int]:
        """The `--dim NAME=VALUE` flags as `free_dims` (the only flag kind rows use)."""
        dims: dict[str, int] = {}
        it = iter(self.flags)
        for flag in it:
            if flag != "--dim":
                raise ValueError(f"{self.name}: only --dim flags are supported, got {flag}")
            key, value = next(it).split("=")
            dims[key] = int(value)
        return dims


def cache_dir() -> Path:
    """Where models/make_realworld.py wrote the models."""
    return Path(os.environ.get("WEBNN_REALWORLD_DIR",
                               "~/.cache/webnn-converter/realworld")).expanduser()


def rows(manifest: Path = MANIFEST) -> list[Row]:
    """Every row of the manifest, its model path inside `cache_dir()`."""
    with manifest.open("rb") as f:
        tables = tomllib.load(f)["model"]
    out = []
    for t in tables:
        tflite = t["kind"] == "litert-torch" or str(t.get("file", "")).endswith(".tflite")
        tol = t.get("tolerance", {})  # absent: validate's default for the compute type
        out.append(Row(t["name"], t["kind"], cache_dir() / (t["name"] + (".tflite" if tflite
                                                                        else ".onnx")),
                       tuple(t.get("flags", ())), tol.get("atol"), tol.get("rtol"),
                       bool(t.get("browser", True)),
                       bool(t.get("detection", False)), str(t.get("known_gap", "")),
                       str(t.get("notes", "")), t))
    return out


def require_model(row: Row) -> Path:
    """The row's model file, or skip saying how to make it."""
    if not row.path.exists():
        pytest.skip(f"{row.path} is missing: make it with {MAKE}")
    return row.path


def convert_row(row: Row) -> tuple[Path, Any]:
    """(the row's model file, its ConversionResult with the row's flags); skips when the
    model is missing, an expected failure naming the row's known gap when it does not
    convert."""
    from converter.api import ConversionError, convert

    path = require_model(row)
    try:
        return path, convert(path, free_dims=row.free_dims or None)
    except ConversionError as exc:
        if row.known_gap:
            pytest.xfail(f"{row.name}: {row.known_gap}: {exc}"[:500])
        raise


def check_first_error(row: Row, out: Path) -> None:
    """`webnn-convert convert MODEL -o OUT` without flags: converts when the row has no flags;
    else fails and its hint names exactly the row's flags (concrete values: a hint
    `--dim x=N` fails, or is an expected failure when the row names the gap in
    `known_gap`)."""
    from click.testing import CliRunner

    from cli.main import cli

    r = CliRunner().invoke(cli, ["convert", str(row.path), "-o", str(out)])
    if not row.flags:
        if r.exit_code != 0 and row.known_gap:
            pytest.xfail(f"{row.name}: {row.known_gap}: {r.output.strip()}"[:500])
        assert r.exit_code == 0, f"{row.name}: {r.output}"
        return
    assert r.exit_code != 0, f"{row.name} converted without {' '.join(row.flags)}"
    message = r.output
    hints = re.findall(r"fix them with ((?:--dim \S+=\S+ ?)+)", message)
    assert hints, f"{row.name}: the first error names no --dim flags: {message}"
    named = hints[-1].strip().rstrip(")").split()
    if named != list(row.flags):
        if row.known_gap:
            pytest.xfail(f"{row.name}: {row.known_gap} (the error says {' '.join(named)})")
        raise AssertionError(f"{row.name}: the error names {' '.join(named)}, the manifest "
                             f"{' '.join(row.flags)}: {message}")


def sorted_detections(outputs: Mapping[str, Any], names: Sequence[str]) -> list[tuple[Any, ...]]:
    """Detections (boxes, scores, labels outputs) as rows sorted by (score descending, label,
    box), so that detections whose scores tie compare equal whatever their order."""
    import numpy as np

    boxes, scores, labels = (np.asarray(outputs[n]) for n in names)
    items = [(-float(s), int(lab), tuple(float(v) for v in b))
             for b, s, lab in zip(boxes.reshape(-1, 4), scores.reshape(-1),
                                  labels.reshape(-1), strict=True)]
    return sorted(items)


def litert_spread(path: Path, feeds: Mapping[str, Any], reference: Mapping[str, Any]
                  ) -> dict[str, float]:
    """Per output, max |LiteRT builtin kernels − `reference`| (LiteRT's default run, with
    XNNPACK) on `feeds`: how far LiteRT's own two CPU kernel sets are apart, the bound of a
    `kernel_spread` row."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    builtin = Interpreter(model_path=str(path), experimental_op_resolver_type=(
        OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    builtin.allocate_tensors()
    for d in builtin.get_input_details():
        builtin.set_tensor(d["index"], feeds[d["name"]])
    builtin.invoke()
    return {d["name"]: float(np.abs(builtin.get_tensor(d["index"]).astype(np.float64)
                                    - np.asarray(reference[d["name"]], np.float64)).max())
            for d in builtin.get_output_details()}
