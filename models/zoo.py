"""The model manifest (`models/zoo.toml`): load it, find each model file, make its inputs.

```python
import importlib.util  # models/ is not a package: load this file by path
zoo = ...  # spec_from_file_location("zoo", "models/zoo.py")
for entry in zoo.load_manifest():
    path = zoo.model_path(entry)                 # a local file (see `source` schemes)
    kw = zoo.convert_kwargs(entry)               # free_dims / input_shapes / pin_inputs
    feeds = zoo.make_inputs(entry, shapes)       # {input name: array}
```

Manifest fields per `[[model]]`:
- `name`: unique id; `source`: where the file comes from:
  `onnx-package:<path inside the installed onnx package>` or
  `pypi:<distribution>:<path inside the installed distribution>` (e.g. the `silero-vad`
  package's `silero_vad/data/silero_vad.onnx`); `licence`; `description`.
- `input_shapes` (by input name), `free_dims` (by `dim_param`), `pins` (input name ->
  `{value, dtype}`: inputs fixed at conversion time, also fed to the reference runtime).
- `inputs`: how test inputs are made: `"onnx-dummy"` (`arange(n) / n`, what
  `onnx.backend.test` feeds the light models) or `"normal"` (seeded standard normal times
  `input_scale`).
- `weights`: `"as-is"` or `"random"` (ConstantOfShape-generated weights of the light models
  replaced by seeded random tensors: He-normal for rank >= 2, uniform(0.5, 1.5) otherwise, so
  that outputs are not uniform).
- `reference_output`: a stored output (`.pb` next to the model) to compare with as well.
- `tolerance`: `{atol, rtol_max}`: pass when max|ours - ref| <= atol + rtol_max * max|ref|.
- `slow`: true for models whose test belongs to the slow (non-default) run.
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import onnx

MANIFEST = Path(__file__).with_name("zoo.toml")


def load_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    """The `[[model]]` entries of the manifest, validated (unique names, known fields)."""
    entries = tomllib.loads(path.read_text())["model"]
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: duplicate model names")
    for e in entries:
        for key in ("name", "source", "licence", "tolerance"):
            if key not in e:
                raise ValueError(f"{path}: model {e.get('name')!r} has no {key!r}")
    return entries


class ModelUnavailable(Exception):
    """The model's source is not installed (e.g. the silero-vad package is missing)."""


def model_path(entry: dict[str, Any]) -> Path:
    """The local file of a manifest entry (ModelUnavailable when its package is missing)."""
    source: str = entry["source"]
    if source.startswith("onnx-package:"):
        path = Path(onnx.__file__).parent / source.split(":", 1)[1]
    elif source.startswith("pypi:"):
        _, dist, rel = source.split(":", 2)
        try:
            files = importlib.metadata.distribution(dist).files or []
        except importlib.metadata.PackageNotFoundError as exc:
            raise ModelUnavailable(f"{entry['name']}: install the {dist!r} package") from exc
        matches = [f for f in files if str(f) == rel]
        if not matches:
            raise ModelUnavailable(f"{entry['name']}: {rel!r} is not in {dist!r}")
        path = Path(str(matches[0].locate()))
    else:
        raise ValueError(f"{entry['name']}: unknown source scheme in {source!r}")
    if not path.is_file():
        raise ModelUnavailable(f"{entry['name']}: {path} does not exist")
    return path


def pins(entry: dict[str, Any]) -> dict[str, np.ndarray]:
    return {name: np.asarray(p["value"], dtype=p.get("dtype", "float32"))
            for name, p in entry.get("pins", {}).items()}


def convert_kwargs(entry: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for `converter.convert` (free_dims, input_shapes, pin_inputs)."""
    kw: dict[str, Any] = {}
    if entry.get("free_dims"):
        kw["free_dims"] = dict(entry["free_dims"])
    if entry.get("input_shapes"):
        kw["input_shapes"] = {k: list(v) for k, v in entry["input_shapes"].items()}
    if entry.get("pins"):
        kw["pin_inputs"] = pins(entry)
    return kw


def load_model(entry: dict[str, Any]) -> onnx.ModelProto:
    """The model, with `weights = "random"` applied."""
    model = onnx.load(model_path(entry))
    if entry.get("weights", "as-is") == "random":
        randomize_constant_of_shape(model, int(entry.get("seed", 0)))
    return model


def randomize_constant_of_shape(model: onnx.ModelProto, seed: int) -> None:
    """Replace every ConstantOfShape whose shape is an initializer by a random initializer
    (in place): He-normal (fan-in = prod(shape[1:])) for rank >= 2, uniform(0.5, 1.5)
    otherwise."""
    rng = np.random.default_rng(seed)
    inits = {t.name: t for t in model.graph.initializer}
    keep = []
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input and node.input[0] in inits:
            shape = [int(d) for d in onnx.numpy_helper.to_array(inits[node.input[0]])]
            if len(shape) >= 2:
                fan_in = max(int(np.prod(shape[1:])), 1)
                value = rng.normal(0.0, np.sqrt(2.0 / fan_in), size=shape)
            else:
                value = rng.uniform(0.5, 1.5, size=shape)
            model.graph.initializer.append(
                onnx.numpy_helper.from_array(value.astype(np.float32), node.output[0]))
            continue
        keep.append(node)
    del model.graph.node[:]
    model.graph.node.extend(keep)


def make_inputs(entry: dict[str, Any], shapes: dict[str, tuple[int, ...]],
                dtypes: dict[str, str]) -> dict[str, np.ndarray]:
    """Test inputs for the (non-pinned) graph inputs with the given static shapes."""
    kind = entry.get("inputs", "normal")
    rng = np.random.default_rng(int(entry.get("seed", 0)))
    scale = float(entry.get("input_scale", 1.0))
    out: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        n = int(np.prod(shape))
        if kind == "onnx-dummy":
            arr = np.arange(n).reshape(shape) / n
        elif kind == "normal":
            arr = rng.normal(size=shape) * scale
        else:
            raise ValueError(f"{entry['name']}: unknown inputs kind {kind!r}")
        out[name] = arr.astype(dtypes.get(name, "float32"))
    return out


def within(ours: np.ndarray, ref: np.ndarray, tolerance: dict[str, float]
           ) -> tuple[bool, float, float]:
    """(ok, max error, allowed error) for max|ours - ref| <= atol + rtol_max * max|ref|."""
    ref64 = np.asarray(ref, np.float64)
    err = float(np.max(np.abs(np.asarray(ours, np.float64) - ref64))) if ref64.size else 0.0
    allowed = float(tolerance["atol"]) + float(tolerance["rtol_max"]) * float(
        np.max(np.abs(ref64)) if ref64.size else 0.0)
    return bool(err <= allowed and not np.isnan(ours).any()), err, allowed
