"""Reading model-zoo manifests (TOML).

A manifest lists models; each entry is a table with:

- `name` (required unless the table key gives it);
- where the model is: `path` (or `file`/`model`), relative to the manifest's folder, to the
  current folder, or, with `package = "onnx"`, to that installed Python package's folder; or
  `source = {pypi = "dist-name", path = "pkg/file.tflite"}` (also `version`, recorded only):
  a file installed by that distribution (found through its metadata, the package is not
  imported); or the string forms `source = "onnx-package:<path inside the onnx package>"`
  and `source = "pypi:<distribution>:<path inside the distribution>"`; or
  `source = "generated:<script>"` with optional `args = {...}`: a generator script in the
  manifest's folder whose `make(path, **args)` writes the model, cached by script content
  and args (`converter.zoo.generated`; the suffix is `.tflite` for `format = "tflite"`, else
  `.onnx`; a generator whose dependency is not installed makes the entry skipped); it runs
  when the manifest is read, or with `read_manifest(..., generate=False)` only when the
  entry is run (see "Lazy generation"); `url` alone is recorded as provenance but never
  downloaded (the entry is skipped), unless the entry has `fetch = true`: then the process
  that runs the entry downloads it (http, https, file; `converter.zoo.fetch`, cached like
  generated models), lazily as generated entries are;
- `source`, `licence`/`license`, `description`: provenance, copied into the reports;
  `sha256`: the model file's digest (a changed file is an error, not a silent re-baseline);
- conversion options: `free_dims` (or `dims`) {name: int}, `input_shapes` (or `shapes`)
  {input: [dims]}, `pin_inputs` (or `pins`) {input: value or {value, dtype}} (fixed at
  conversion time and fed to the original model), `signature`, `budgets` {field of
  `converter.core.budgets.Budgets`: value} (e.g. `{ max_derived_bytes = "1GiB" }` for a model that
  derives more constants at conversion time than its size allows by default);
- `weights`: "as-is" (default) or "random": every ConstantOfShape whose shape is an
  initializer (the weights of the onnx package's "light" models, all equal) is replaced by a
  seeded random initializer before conversion and validation (ONNX only; see
  `converter.zoo.sources.randomize_constant_of_shape`);
- validation: `rtol`, `atol` (or `tolerance` = number for both, {rtol, atol} (`rtol_max` is
  a synonym of `rtol`: the criterion is max|ours - ref| <= atol + rtol * max|ref|), or
  {output: {rtol, atol}}, of which the loosest applies to every output), `seed`, `inputs`:
  an .npz file of input overrides (relative like `path`), a table {input: {shape, dtype,
  range = [low, high]}} (seeded uniform values in that range; `shape` also fixes dynamic
  dimensions unless `input_shapes` is given), or a recipe for every non-pinned input:
  "onnx-dummy" (`arange(n) / n`, what `onnx.backend.test` feeds the light models) or
  "normal" (seeded standard normal times `input_scale`, default 1);
  `reference_output`: a stored output (a TensorProto `.pb` file next to the model, else
  relative like `path`) that the converted graph's first output must also match;
- `slow` (bool): skipped by default by `webnn-convert zoo` unless asked for.

Accepted layouts: `[[model]]` / `[[models]]` arrays of tables, `[models.NAME]` tables, or
top-level `[NAME]` tables that have a path-like key. Unknown keys are kept in `extra`.

Lazy generation: `read_manifest(path, generate=False)` (and `read_manifests`) checks a
generated entry's table and that its script exists but does not run the generator: the
entry has `path` None, `missing` "" and keeps its table in `pending`; `materialize(entry)`
generates the model then and returns the complete entry (`run_entry` does it, so
`webnn-convert zoo --filter X` generates only the entries it runs, in its worker
processes). A broken generator is then that entry's error instead of a manifest error.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import importlib.util
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from converter.core.errors import InvalidModel
from converter.core.files import FileTooLarge, NotRegularFile, read_bounded

_PATH_KEYS = ("path", "file", "model")
_KNOWN = {"name", *_PATH_KEYS, "package", "url", "source", "licence", "license", "free_dims",
          "dims", "input_shapes", "shapes", "pin_inputs", "pins", "signature", "rtol", "atol",
          "tolerance", "seed", "inputs", "slow", "format", "description", "notes", "weights",
          "reference_output", "input_scale", "sha256", "args", "fetch", "budgets"}
INPUT_RECIPES = ("onnx-dummy", "normal")
WEIGHTS = ("as-is", "random")

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-3


@dataclass(frozen=True)
class ZooEntry:
    """One model of a manifest, with paths resolved (`path` None when it cannot be found;
    `missing` then says why)."""

    name: str
    manifest: str
    path: str | None
    source: str = ""
    licence: str = ""
    free_dims: Mapping[str, int] = field(default_factory=dict)
    input_shapes: Mapping[str, Sequence[int]] = field(default_factory=dict)
    pin_inputs: Mapping[str, Any] = field(default_factory=dict)
    signature: str | None = None
    budgets: Mapping[str, Any] = field(default_factory=dict)
    """Conversion budgets the entry raises or lowers ({Budgets field: value})."""
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    seed: int = 0
    inputs: str | None = None
    input_specs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per input: `shape`, `dtype`, `range` = [low, high] (seeded uniform values; integers
    drawn from [low, high)) or a constant `value`."""
    input_recipe: str = ""
    """"onnx-dummy" or "normal" (see the module docstring); "" uses validation's inputs."""
    input_scale: float = 1.0
    weights: str = "as-is"
    reference_output: str | None = None
    """The resolved stored-output file (None when the entry names none)."""
    sha256: str = ""
    description: str = ""
    format: str = ""
    slow: bool = False
    missing: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    pending: Mapping[str, Any] = field(default_factory=dict)
    """The manifest table of a generated entry whose model is not generated yet (read with
    `generate=False`; `materialize` generates it); empty otherwise."""
    folder: str = ""
    """The manifest's folder, absolute (resolved where the manifest was read): where a
    pending entry's generator script and relative paths are found, whatever the current
    folder of the process that materializes it (a Dask worker)."""


def default_manifests() -> list[Path]:
    """The shipped manifests, `zoo.toml` and `zoo_tflite.toml` of `converter.zoo.models`
    (package data, the same files whether the package runs from a checkout or an install).
    Restriction: the package must lie in a folder (a zip import has no paths for the generator
    scripts and the workers to read)."""
    folder = importlib.resources.files("converter.zoo.models")
    if not isinstance(folder, Path):
        raise InvalidModel(f"the shipped zoo manifests are not files in a folder ({folder}): "
                           "install webnn-converter unzipped")
    return [folder / "zoo.toml", folder / "zoo_tflite.toml"]


def _tables(data: Mapping[str, Any]) -> Iterable[tuple[str | None, Mapping[str, Any]]]:
    for key in ("model", "models"):
        value = data.get(key)
        if isinstance(value, list):
            for t in value:
                if isinstance(t, Mapping):
                    yield None, t
        elif isinstance(value, Mapping):
            for name, t in value.items():
                if isinstance(t, Mapping):
                    yield name, t
    for key, value in data.items():
        if key in ("model", "models") or not isinstance(value, Mapping):
            continue
        if any(k in value for k in (*_PATH_KEYS, "url")):
            yield key, value


def _resolve(value: str, base: Path, package: str | None, dist: str | None = None
             ) -> Path | None:
    """The file `value` names: inside distribution `dist` (its installed files, without
    importing it), inside import package `package`, absolute, or relative to the manifest's
    folder or the current folder."""
    candidates: list[Path] = []
    p = Path(value).expanduser()
    if dist:
        try:
            candidates.append(Path(str(importlib.metadata.distribution(dist).locate_file(p))))
        except importlib.metadata.PackageNotFoundError:
            pass
    if package:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            candidates += [Path(loc) / p for loc in spec.submodule_search_locations]
    if p.is_absolute():
        candidates.append(p)
    else:
        candidates += [base / p, Path.cwd() / p]
    return next((c for c in candidates if c.is_file()), None)


def _tolerance(t: Mapping[str, Any]) -> tuple[float, float]:
    rtol, atol = DEFAULT_RTOL, DEFAULT_ATOL
    tol = t.get("tolerance")
    if isinstance(tol, (int, float)):
        rtol = atol = float(tol)
    elif isinstance(tol, Mapping) and tol and all(isinstance(v, Mapping)
                                                 for v in tol.values()):
        # per output: validation applies the loosest to every output
        rtol = max(float(v.get("rtol", v.get("rtol_max", rtol))) for v in tol.values())
        atol = max(float(v.get("atol", atol)) for v in tol.values())
    elif isinstance(tol, Mapping):
        rtol = float(tol.get("rtol", tol.get("rtol_max", rtol)))
        atol = float(tol.get("atol", atol))
    elif tol is not None:
        raise ValueError(f"tolerance must be a number or {{rtol, atol}}, got {tol!r}")
    if "rtol" in t:
        rtol = float(t["rtol"])
    if "atol" in t:
        atol = float(t["atol"])
    return rtol, atol


def _source_text(src: Any, url: Any, args: Any = None) -> str:
    if isinstance(src, str) and src.startswith("generated:") and isinstance(args, Mapping) \
            and args:
        return f"{src} ({', '.join(f'{k}={v}' for k, v in args.items())})"
    if isinstance(src, Mapping):
        return ", ".join(f"{k}={v}" for k, v in src.items())
    return str(src or url or "")


def _input_spec(name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "shape" in spec:
        out["shape"] = [int(d) for d in spec["shape"]]
    if "dtype" in spec:
        out["dtype"] = str(spec["dtype"])
    if "range" in spec:
        lo, hi = spec["range"]
        out["range"] = [float(lo), float(hi)]
    if "value" in spec:
        out["value"] = spec["value"]
    return out


MAX_MANIFEST_BYTES = 64 << 20
"""The largest zoo manifest read (the shipped ones are well under 1 MiB)."""


def read_manifest(path: str | Path, names: Iterable[str] | None = None, *,
                  generate: bool = True) -> list[ZooEntry]:
    """Entries of one manifest file; InvalidModel for unreadable TOML, bad entries or a name
    used twice. With `names`, only the entries of those names (the others are not read, so
    their models are not generated). With `generate=False`, generated entries are left
    pending (see "Lazy generation" in the module docstring)."""
    path = Path(path)
    wanted = set(names) if names is not None else None
    try:  # a regular file only (a FIFO would block: converter.core.files)
        data = tomllib.loads(read_bounded(path, MAX_MANIFEST_BYTES, "the manifest"
                                          ).decode("utf-8"))
    except FileNotFoundError:
        raise InvalidModel(f"manifest {str(path)!r} does not exist") from None
    except (NotRegularFile, FileTooLarge) as exc:
        raise InvalidModel(str(exc)) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidModel(f"manifest {str(path)!r} is not valid TOML: {exc}") from None
    base = path.resolve().parent
    entries: list[ZooEntry] = []
    for key, t in _tables(data):
        name = str(t.get("name") or key or "")
        if not name:
            raise InvalidModel(f"manifest {str(path)!r}: an entry has no name")
        if wanted is not None and name not in wanted:
            continue
        try:
            entry = _entry(t, name, path, base, generate)
        except (TypeError, ValueError) as exc:
            raise InvalidModel(f"manifest {str(path)!r}: entry {name!r}: {exc}") from None
        if any(e.name == name for e in entries):
            raise InvalidModel(f"manifest {str(path)!r}: model name {name!r} is used twice")
        entries.append(entry)
    return entries


def _location(t: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(path, import package, distribution) of an entry's model file."""
    rel = next((t[k] for k in _PATH_KEYS if isinstance(t.get(k), str)), None)
    package = t.get("package") if isinstance(t.get("package"), str) else None
    src = t.get("source")
    dist = None
    if isinstance(src, Mapping):  # source = {pypi = "dist-name", path = "pkg/file"}
        rel = rel or (src.get("path") if isinstance(src.get("path"), str) else None)
        dist = src.get("pypi") if isinstance(src.get("pypi"), str) else None
        package = package or (src.get("package") if isinstance(src.get("package"), str)
                              else None)
    elif isinstance(src, str) and src.startswith("onnx-package:") and rel is None:
        rel, package = src.split(":", 1)[1], "onnx"
    elif isinstance(src, str) and src.startswith("pypi:") and rel is None:
        parts = src.split(":", 2)
        if len(parts) != 3 or not parts[1] or not parts[2]:
            raise ValueError(f"source {src!r} is not 'pypi:<distribution>:<path>'")
        dist, rel = parts[1], parts[2]
    return rel, package, dist


def _budgets(value: Any) -> dict[str, Any]:
    """`budgets`: {Budgets field: value}, checked by building the Budgets it gives."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"budgets must be a table of budget values, got {value!r}")
    from converter.core.budgets import Budgets

    try:
        Budgets(**dict(value))
    except TypeError as exc:
        raise ValueError(f"budgets: {exc}") from None
    return dict(value)


def _pins(value: Any) -> dict[str, Any]:
    """`pins`: {input: value} or {input: {value, dtype}} (dtype default float32)."""
    import numpy as np

    out: dict[str, Any] = {}
    for k, v in dict(value or {}).items():
        if isinstance(v, Mapping):
            if "value" not in v:
                raise ValueError(f"pin {k!r} has no value")
            out[k] = np.asarray(v["value"], dtype=str(v.get("dtype", "float32")))
        else:
            out[k] = v
    return out


def materialize(entry: ZooEntry) -> ZooEntry:
    """`entry` with its model generated when it is pending (`read_manifest(...,
    generate=False)`), else `entry` itself; InvalidModel when the generator fails (a missing
    dependency gives an entry with `path` None and `missing` saying which)."""
    if not entry.pending:
        return entry
    path = Path(entry.manifest)
    base = Path(entry.folder) if entry.folder else path.resolve().parent
    try:
        return _entry(entry.pending, entry.name, path, base, True)
    except (TypeError, ValueError) as exc:
        raise InvalidModel(f"manifest {str(path)!r}: entry {entry.name!r}: {exc}") from None


def _generated(t: Mapping[str, Any], base: Path, run: bool = True
               ) -> tuple[Path | None, str]:
    """(generated model file, why missing) of a `source = "generated:<script>"` entry; with
    `run` False only the table and the script's presence are checked ((None, "") when the
    entry can be generated later)."""
    from converter.zoo.generated import SCHEME, generate

    script_name = str(t["source"])[len(SCHEME):]
    if not script_name:
        raise ValueError(f"source {t['source']!r} names no generator script")
    args = t.get("args") or {}
    if not isinstance(args, Mapping):
        raise ValueError(f"args must be a table, got {args!r}")
    script = _resolve(script_name, base, None)
    if script is None:
        return None, f"generator script {script_name!r} not found"
    suffix = _suffix(str(t.get("format", "")))
    if not run:
        return None, ""
    try:
        return generate(script, args, suffix), ""
    except ModuleNotFoundError as exc:
        return None, f"generator {script_name!r}: module {exc.name!r} not found"
    except Exception as exc:  # noqa: BLE001 - a broken generator is a manifest error
        raise ValueError(f"generator {script_name!r} failed: {type(exc).__name__}: "
                         f"{exc}") from exc


def _entry(t: Mapping[str, Any], name: str, path: Path, base: Path, generate: bool = True
           ) -> ZooEntry:
    src = t.get("source")
    pending: dict[str, Any] = {}
    if isinstance(src, str) and src.startswith("generated:"):
        rel, package, dist = None, None, None
        resolved, missing = _generated(t, base, generate)
        if resolved is None and not missing:
            pending = dict(t)
    elif t.get("fetch") is True and isinstance(t.get("url"), str) and _location(t)[0] is None:
        from converter.zoo.fetch import fetched

        rel, package, dist, missing = None, None, None, ""
        resolved = fetched(t["url"], _suffix(str(t.get("format", "")))) if generate else None
        if resolved is None:
            pending = dict(t)
    else:
        rel, package, dist = _location(t)
        resolved = _resolve(rel, base, package, dist) if rel else None
        missing = ""
    if resolved is None and not missing and not pending:
        if rel:
            where = (f" in package {package!r}" if package else
                     f" in distribution {dist!r}" if dist else "")
            missing = f"model file {rel!r}{where} not found"
        elif t.get("url"):
            missing = f"not downloaded ({t['url']})"
        else:
            missing = "the entry names no model file (path)"
    inputs = t.get("inputs")
    recipe = inputs if isinstance(inputs, str) and inputs in INPUT_RECIPES else ""
    inputs_path = (_resolve(inputs, base, package) if isinstance(inputs, str) and not recipe
                   else None)
    specs = ({k: dict(v) for k, v in inputs.items() if isinstance(v, Mapping)}
             if isinstance(inputs, Mapping) else {})
    weights = str(t.get("weights", "as-is"))
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    stored = t.get("reference_output")
    stored_path = None
    if isinstance(stored, str):
        near = resolved.parent / stored if resolved is not None else None
        stored_path = near if near is not None and near.is_file() else _resolve(
            stored, base, package)
        if stored_path is None and resolved is not None:
            raise ValueError(f"reference_output {stored!r} not found next to {resolved}")
    rtol, atol = _tolerance(t)
    return ZooEntry(
        name=name, manifest=str(path), folder=str(base), path=str(resolved) if resolved else None,
        source=_source_text(t.get("source"), t.get("url"), t.get("args")),
        licence=str(t.get("licence") or t.get("license") or ""),
        free_dims={k: int(v) for k, v in
                   dict(t.get("free_dims") or t.get("dims") or {}).items()},
        input_shapes={k: [int(d) for d in v] for k, v in
                      dict(t.get("input_shapes") or t.get("shapes") or {}).items()},
        pin_inputs=_pins(t.get("pin_inputs") or t.get("pins")),
        signature=t.get("signature"), budgets=_budgets(t.get("budgets")), rtol=rtol,
        atol=atol,
        seed=int(t.get("seed", 0)),
        inputs=str(inputs_path) if inputs_path else None,
        input_specs={k: _input_spec(k, v) for k, v in specs.items()},
        input_recipe=recipe, input_scale=float(t.get("input_scale", 1.0)),
        weights=weights, reference_output=str(stored_path) if stored_path else None,
        sha256=str(t.get("sha256", "")), description=str(t.get("description", "")),
        format=str(t.get("format", "")),
        slow=bool(t.get("slow", False)), missing=missing,
        extra={k: v for k, v in t.items() if k not in _KNOWN}, pending=pending)


def read_manifests(paths: Sequence[str | Path], *, generate: bool = True) -> list[ZooEntry]:
    """Entries of several manifests in order; a name seen twice keeps its first entry.
    `generate` as in `read_manifest`."""
    seen: set[str] = set()
    out: list[ZooEntry] = []
    for p in paths:
        for e in read_manifest(p, generate=generate):
            if e.name not in seen:
                seen.add(e.name)
                out.append(e)
    return out


def _suffix(fmt: str) -> str:
    """The file suffix of generated models of front end `fmt` (the fallback front end's when
    `fmt` is empty)."""
    from converter.frontends import get, registered

    if fmt:
        return get(fmt).suffixes[0]
    return next(fe for fe in registered().values() if fe.fallback).suffixes[0]
