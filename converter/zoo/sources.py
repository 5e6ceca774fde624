"""What a zoo entry feeds to conversion and validation: the model (with `weights = "random"`
applied), the validation inputs its manifest asks for, and its stored reference output.

```python
from converter.zoo import read_manifests, default_manifests
from converter.zoo.sources import load_model, entry_inputs, stored_outputs
entry = read_manifests(default_manifests())[0]
model = load_model(entry)                     # a path, or bytes for "random" weights
result = converter.convert(model, ...)
feeds = entry_inputs(entry, result)           # {input: array} overrides for validate()
expected = stored_outputs(entry, result)      # {first output: stored array} or {}
```

Restrictions: random weights and stored outputs are ONNX-only (a TensorProto `.pb`); input
recipes need static input shapes (the converted model's).
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from converter.zoo.manifest import ZooEntry, materialize


class ModelChanged(Exception):
    """The model file's sha256 differs from the manifest's."""


def check_digest(entry: ZooEntry) -> None:
    """Raise ModelChanged when the entry has a `sha256` that its file does not match."""
    if not entry.sha256 or entry.path is None:
        return
    digest = hashlib.sha256(Path(entry.path).read_bytes()).hexdigest()
    if digest != entry.sha256:
        raise ModelChanged(f"{entry.name}: the model file changed upstream (sha256 {digest}, "
                           f"manifest {entry.sha256})")


def load_model(entry: ZooEntry) -> str | bytes:
    """The model to convert and validate: the entry's file path, or the serialized ONNX model
    with `weights = "random"` applied (a pending generated entry is generated first, see
    `manifest.materialize`). Raises ValueError for an entry without a file."""
    entry = materialize(entry)
    if entry.path is None:
        raise ValueError(f"{entry.name}: {entry.missing}")
    if entry.weights != "random":
        return entry.path
    import onnx

    model = onnx.load(entry.path)
    randomize_constant_of_shape(model, entry.seed)
    data: bytes = model.SerializeToString()  # protobuf's methods are untyped here
    return data


def randomize_constant_of_shape(model: Any, seed: int = 0) -> Any:
    """Replace (in place; also returned) every ConstantOfShape whose shape input is an
    initializer by a seeded random float32 initializer: He-normal (fan-in = prod(shape[1:]))
    for rank >= 2, uniform(0.5, 1.5) otherwise (batch-norm parameters stay positive). The
    onnx package's "light" models make all their weights this way (all equal), which makes
    their outputs uniform. In IR-version-3 models (where every initializer must also be a
    graph input) the new initializers are declared as graph inputs too, so the result passes
    `onnx.checker`."""
    import onnx

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
            if model.ir_version < 4:  # IR 3: every initializer is also a graph input
                model.graph.input.append(onnx.helper.make_tensor_value_info(
                    node.output[0], onnx.TensorProto.FLOAT, shape))
            continue
        keep.append(node)
    del model.graph.node[:]
    model.graph.node.extend(keep)
    return model


def recipe_inputs(entry: ZooEntry, shapes: dict[str, tuple[int, ...]],
                  dtypes: dict[str, str]) -> dict[str, np.ndarray]:
    """Inputs of the given static shapes (in that order) by the entry's `input_recipe`:
    "onnx-dummy" = arange(n) / n, "normal" = seeded standard normal (one generator seeded
    with `seed`, drawn in input order) times `input_scale`; {} without a recipe."""
    if not entry.input_recipe:
        return {}
    rng = np.random.default_rng(entry.seed)
    out: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        n = int(np.prod(shape))
        if entry.input_recipe == "onnx-dummy":
            arr = np.arange(n).reshape(shape) / n
        elif entry.input_recipe == "normal":
            arr = rng.normal(size=shape) * entry.input_scale
        else:
            raise ValueError(f"{entry.name}: unknown inputs recipe {entry.input_recipe!r}")
        out[name] = arr.astype(dtypes.get(name, "float32"))
    return out


def spec_inputs(entry: ZooEntry, result: Any) -> dict[str, Any]:
    """Inputs the entry's `input_specs` define (a `range` or a `value`), seeded by the
    entry's seed and the input name; shapes and dtypes from the converted model."""
    out: dict[str, Any] = {}
    infos = {vi.name: vi for vi in result.inputs}
    for name, spec in entry.input_specs.items():
        vi = infos.get(name)
        if vi is None:
            continue
        shape = tuple(int(d) for d in vi.shape)
        dtype = np.dtype(spec.get("dtype", vi.dtype))
        if "value" in spec:
            out[name] = np.broadcast_to(np.asarray(spec["value"], dtype), shape).copy()
        elif "range" in spec:
            lo, hi = spec["range"]
            rng = np.random.default_rng([entry.seed, zlib.crc32(name.encode())])
            if dtype.kind in "iub":
                out[name] = rng.integers(int(lo), max(int(hi), int(lo) + 1),
                                         size=shape).astype(dtype)
            else:
                out[name] = rng.uniform(lo, hi, size=shape).astype(dtype)
    return out


def convert_options(entry: ZooEntry) -> dict[str, Any]:
    """The `convert()` keyword arguments the entry sets: its free dimensions, input shapes
    (`input_shapes`, else the shapes of its per-input specs), pinned inputs, signature and
    budgets."""
    from converter.core.budgets import Budgets

    shapes = dict(entry.input_shapes) or {k: v["shape"] for k, v in
                                           entry.input_specs.items() if "shape" in v}
    return {"free_dims": dict(entry.free_dims) or None, "input_shapes": shapes or None,
            "pin_inputs": dict(entry.pin_inputs) or None, "signature": entry.signature,
            "budgets": Budgets(**entry.budgets) if entry.budgets else None}


def entry_inputs(entry: ZooEntry, result: Any) -> dict[str, np.ndarray]:
    """Every input override the entry defines for the converted model `result`: its recipe
    (over the converted model's inputs, pinned ones excluded), its per-input specs, then its
    .npz file (later ones win)."""
    shapes = {vi.name: tuple(int(d) for d in vi.shape) for vi in result.inputs}
    dtypes = {vi.name: vi.dtype for vi in result.inputs}
    out = recipe_inputs(entry, shapes, dtypes)
    out.update(spec_inputs(entry, result))
    if entry.inputs:
        with np.load(entry.inputs, allow_pickle=False) as data:
            out.update({k: np.asarray(data[k]) for k in data.files})
    return out


def stored_outputs(entry: ZooEntry, result: Any) -> dict[str, np.ndarray]:
    """{first output name: the stored reference output} when the entry has one, else {}."""
    if not entry.reference_output:
        return {}
    import onnx

    stored = onnx.numpy_helper.to_array(onnx.load_tensor(entry.reference_output))
    return {result.outputs[0].name: stored}
