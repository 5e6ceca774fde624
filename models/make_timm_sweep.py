"""The timm architecture sweep: one random-weight model per timm architecture family, exported
to ONNX by both torch exporters, as zoo rows (models/sweep_timm.toml).

Rule for the rows: timm registers ~1,370 model names in ~100 modules (`resnet`,
`efficientnet`, `vision_transformer`, ...); a module is an architecture *family*. Each
family is represented by its registered model with the fewest parameters (counted on
torch's meta device, nothing allocated; ties broken by name; a model that cannot be built on
the meta device is left out of the choice). Each representative is two rows: `torchscript`
(`torch.onnx.export(..., dynamo=False)`, opset 17) and `dynamo` (`dynamo=True`, opset 18).

`make(path, arch=..., exporter="torchscript", size=64, seed=0)` is the generator protocol of
`converter/zoo/generated.py` (the manifest names this script as `source =
"generated:make_timm_sweep.py"`): `timm.create_model(arch, pretrained=False)` with weights
from `torch.manual_seed(seed)` (timm's own initialisation; nothing is downloaded), in eval
mode, traced with one image `[1, 3, size, size]` (static shapes). A model that does not run
at `size` is built again with `img_size=size` (ViT-like models whose position embeddings
fix the size), else traced at the smallest size its `pretrained_cfg` names (`input_size`,
and `min_input_size` when given; 224 for a name without a config). The chosen size is in
the ONNX file's input shape; when no size works, the error raised is the first one (the
model as timm builds it, at 64x64).

```bash
python models/make_timm_sweep.py resnet18 /tmp/resnet18.onnx --exporter dynamo
python models/make_timm_sweep.py --manifest models/sweep_timm.toml   # rewrite the rows
```

Dependencies: `timm` (PyPI, with torchvision) and `torch` (the `sweeps` extra:
`pip install -e ".[sweeps]"`); `onnxscript` for the dynamo rows. Without them the rows are
listed as skipped. Where torchvision's compiled ops do not load against the installed torch
(a torch build torchvision was not compiled for), its Python parts are used without them:
timm needs none of its compiled ops.

Restrictions: the cache key of generated models covers this file's bytes only, not the
versions of timm / torch, which change the exported graphs; the family choice is made when
the manifest is written (with the timm version then installed, recorded in its header).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import logging
import sys
import types
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

EXPORTERS = ("torchscript", "dynamo")
OPSET_TORCHSCRIPT = 17
OPSET_DYNAMO = 18
SIZE = 64
FALLBACK_SIZE = 224
MANIFEST = "sweep_timm.toml"
SCRIPT = "make_timm_sweep.py"


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def _timm() -> Any:
    """timm, imported so that torchvision's compiled ops are optional (see the module
    docstring)."""
    _require("torch")
    _require("timm")
    if "torchvision" not in sys.modules:
        import torch

        try:
            from torchvision.extension import _has_ops  # noqa: F401 - loads torchvision
        except RuntimeError:  # its meta kernels name ops its library could not register
            for name in [m for m in sys.modules if m.startswith("torchvision")]:
                del sys.modules[name]
            stub = types.ModuleType("torchvision._meta_registrations")
            sys.modules["torchvision._meta_registrations"] = stub
        del torch
    import timm

    return timm


def preload() -> None:
    """Import the heavy dependencies (`converter.zoo.generated.preload`)."""
    _timm()
    import torch.onnx  # noqa: F401


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(disabled)


def _sizes(timm: Any, arch: str, size: int) -> list[int]:
    """Image sizes to try, smallest first: `size`, then the pretrained config's."""
    out = [size]
    try:
        cfg = timm.models.get_pretrained_cfg(arch)
    except Exception:  # noqa: BLE001 - some names have no config
        cfg = None
    for key in ("min_input_size", "input_size"):
        value = getattr(cfg, key, None) if cfg is not None else None
        if value and int(value[-1]) not in out:
            out.append(int(value[-1]))
    if len(out) == 1:  # no config (a deprecated alias name): ImageNet's usual size
        out.append(FALLBACK_SIZE)
    return out


def build(arch: str, size: int = SIZE, seed: int = 0) -> tuple[Any, Any]:
    """(model in eval mode, example image) for `arch` (see the module docstring); the last
    error when it runs at no size."""
    timm = _timm()
    import torch

    error: Exception | None = None
    for s in _sizes(timm, arch, size):
        for kwargs in ({}, {"img_size": s}):
            torch.manual_seed(seed)
            try:
                model = timm.create_model(arch, pretrained=False, **kwargs).eval()
                x = torch.randn(1, 3, s, s, generator=torch.Generator().manual_seed(seed))
                with torch.no_grad():
                    model(x)
                return model, x
            except Exception as exc:  # noqa: BLE001 - try the next size / kwargs
                error = error or exc
    assert error is not None
    raise error  # the first one: the model as timm builds it, at `size`


def make(path: Path, arch: str = "resnet18", exporter: str = "torchscript", size: int = SIZE,
         seed: int = 0) -> None:
    """Write `arch` exported by `exporter` to `path` (the generator protocol)."""
    if exporter not in EXPORTERS:
        raise ValueError(f"exporter must be one of {', '.join(EXPORTERS)}, got {exporter!r}")
    if exporter == "dynamo":
        _require("onnxscript")
    with _quiet():
        try:
            _export(path, arch, exporter, size, seed)
        except ModuleNotFoundError:
            raise
        except Exception as exc:  # noqa: BLE001 - the exporters' messages print whole graphs
            lines = str(exc).strip().splitlines()
            text = f"{type(exc).__name__}: {lines[0] if lines else ''}"
            raise RuntimeError(text[:300]) from None


def _export(path: Path, arch: str, exporter: str, size: int, seed: int) -> None:
    model, x = build(arch, size, seed)
    import torch

    with torch.no_grad():
        if exporter == "torchscript":
            torch.onnx.export(model, (x,), str(path), input_names=["image"],
                              output_names=["logits"], opset_version=OPSET_TORCHSCRIPT,
                              do_constant_folding=True, dynamo=False)
        else:
            program = torch.onnx.export(model, (x,), input_names=["image"],
                                        output_names=["logits"], opset_version=OPSET_DYNAMO,
                                        dynamo=True, external_data=False, verbose=False)
            program.save(str(path), external_data=False)


def representatives() -> dict[str, str]:
    """{family (timm module): its model with the fewest parameters} (the module docstring's
    rule), families in name order."""
    timm = _timm()
    import torch
    from timm.models import _registry

    out: dict[str, str] = {}
    with _quiet():
        for family in sorted(_registry._module_to_models):
            best: tuple[int, str] | None = None
            for arch in sorted(_registry._module_to_models[family]):
                try:
                    with torch.device("meta"):
                        model = timm.create_model(arch, pretrained=False)
                    n = sum(p.numel() for p in model.parameters())
                except Exception:  # noqa: BLE001 - not buildable on meta: not chosen
                    continue
                if best is None or (n, arch) < best:
                    best = (n, arch)
            if best is not None:
                out[family] = best[1]
    return out


def manifest_text(families: dict[str, str], version: str) -> str:
    """The sweep manifest: two rows (exporters) per family representative."""
    lines = [
        "# The timm architecture sweep (generated by models/make_timm_sweep.py --manifest; do",
        "# not edit): one random-weight model per timm family (its model with the fewest",
        f"# parameters, timm {version}), exported by both torch exporters at 64x64 where the",
        "# model allows it. Run it with `webnn-convert zoo models/sweep_timm.toml --jobs 2",
        "# --report DIR` (the `sweeps` extra: pip install -e \".[sweeps]\"); the per-family",
        "# table: `python -m converter.zoo.sweep DIR/report.json`. Results: docs/sweeps.md.",
        "",
    ]
    for family, arch in families.items():
        for exporter in EXPORTERS:
            lines += [
                "[[model]]",
                f'name = "timm_{arch}_{exporter}"',
                f'source = "generated:{SCRIPT}"',
                f'args = {{ arch = "{arch}", exporter = "{exporter}" }}',
                f'family = "{family}"',
                f'variant = "{exporter}"',
                'licence = "random weights generated by the project (Apache-2.0); '
                'architecture from timm (Apache-2.0)"',
                f'description = "timm {arch} ({family}), torch.onnx.export '
                f'{"dynamo=False, opset 17" if exporter == "torchscript" else "dynamo=True, opset 18"}"',
                "tolerance = { atol = 0.001, rtol = 0.001 }",
                "",
            ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("arch", nargs="?")
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--exporter", choices=EXPORTERS, default="torchscript")
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--manifest", type=Path, help="write the sweep manifest here")
    args = parser.parse_args(argv)
    if args.manifest:
        families = representatives()
        import timm

        args.manifest.write_text(manifest_text(families, timm.__version__), encoding="utf-8")
        print(f"{len(families)} families -> {args.manifest}")
        return 0
    if not args.arch or not args.out:
        parser.error("give ARCH OUT, or --manifest FILE")
    make(args.out, args.arch, args.exporter, args.size, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
