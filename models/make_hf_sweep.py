"""The Hugging Face transformers sweep: a tiny random-weight model of every `transformers`
model type, exported by `torch.onnx`, as zoo rows (models/sweep_hf.toml).

Rows: one per model type that has a base model class (`AutoModel`'s mapping), variant
`base` (the base model, TorchScript export `dynamo=False`, opset 17, static shapes); the
decoder-only types (in the causal-LM mapping, not in the masked-LM one) have a second row,
`with_past`: a decoder step with past key values in (4 past positions, a `DynamicCache`
built from the inputs) and the present ones out. Each row records its `kind`: `decoder`,
`seq2seq` (encoder-decoder: decoder_input_ids of 4 tokens too), `vision` (pixel_values),
`audio` (input_values / input_features), `multimodal` (image-text mappings) or `encoder`.

Tiny config rule: the model type's config class built with what it has of hidden size 32
(`hidden_size`, `d_model`, `n_embd`, `embed_dim`, ...), 2 layers, 4 attention heads (2
key/value heads), intermediate size 64, vocabulary 512, 128 positions, image size 32, 16
mel bins, MoE with 4 experts (2 per token), lists of per-stage depths set to 1 and
per-stage widths to 16, 32, ...; the same for its sub-configs (text / vision / audio). Seeded
weights (`torch.manual_seed(seed)`, transformers' own initialisation); nothing is
downloaded. Inputs: token ids `[1, 8]` in [3, 100), attention mask of ones, images `[1,
channels, 32, 32]`, audio `[1, 400]` samples or features `[1, mel bins, 2 * source
positions]`.

`make(path, model_type=..., variant="base", seed=0)` is the generator protocol of
`converter/zoo/generated.py` (the manifest names this script as `source =
"generated:make_hf_sweep.py"`); a type the generic recipe cannot build or export raises (the
zoo row is then an "error" with reason generator_failed and the exception: the sweep's
"not exported" count).

```bash
python models/make_hf_sweep.py bert /tmp/bert.onnx
python models/make_hf_sweep.py --manifest models/sweep_hf.toml   # rewrite the rows
```

Dependencies: the `transformers` extra (torch, transformers). Restrictions: the recipe is
generic, so types that need inputs it does not make (bounding boxes, image-text token
layouts, ...) or a config it cannot shrink fail to export and are counted as such; the
cache key of generated models covers this file's bytes only, not the versions of
transformers / torch.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import logging
import sys
import types
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

SEQ = 8
PAST = 4
IMAGE = 32
AUDIO = 400
OPSET = 17
VARIANTS = ("base", "with_past")
SCRIPT = "make_hf_sweep.py"
MANIFEST = "sweep_hf.toml"

OVERRIDES: dict[str, int] = {
    "hidden_size": 32, "d_model": 32, "n_embd": 32, "embed_dim": 32, "dim": 32,
    "hidden_dim": 64, "embedding_size": 32, "projection_dim": 32, "d_embed": 32,
    "num_hidden_layers": 2, "n_layer": 2, "n_layers": 2, "num_layers": 2,
    "encoder_layers": 2, "decoder_layers": 2, "num_decoder_layers": 2,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "num_heads": 4,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 8, "d_kv": 8, "kv_channels": 8,
    "intermediate_size": 64, "n_inner": 64, "d_ff": 64, "ffn_dim": 64, "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "vocab_size": 512, "max_position_embeddings": 128, "n_positions": 128,
    "max_source_positions": 8, "max_target_positions": 128,
    "image_size": IMAGE, "num_mel_bins": 16,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4,
    "num_experts_per_tok": 2, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    "decoder_start_token_id": 0,
}
"""Integer config fields set when the config class has them (the module docstring's rule)."""
LIST_DEPTHS = ("depths", "num_layers_per_stage", "stage_depths")
LIST_WIDTHS = ("hidden_sizes", "embed_dims", "dims", "widths", "stage_dims")
LIST_HEADS = ("num_attention_heads", "num_heads")


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def _torch() -> Any:
    """torch, with torchvision's compiled ops optional (transformers imports torchvision
    when it is installed; one built for another torch build fails at import)."""
    _require("torch")
    import torch

    if "torchvision" not in sys.modules and importlib.util.find_spec("torchvision"):
        try:
            import torchvision  # noqa: F401
        except RuntimeError:
            for name in [m for m in sys.modules if m.startswith("torchvision")]:
                del sys.modules[name]
            stub = types.ModuleType("torchvision._meta_registrations")
            sys.modules["torchvision._meta_registrations"] = stub
    return torch


def preload() -> None:
    """Import the heavy dependencies (`converter.zoo.generated.preload`)."""
    _torch()
    _require("transformers")
    import torch.onnx  # noqa: F401
    import transformers  # noqa: F401


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


def _mappings() -> Any:
    _torch()
    _require("transformers")
    from transformers.models.auto import modeling_auto

    return modeling_auto


def kind(model_type: str) -> str:
    """The model type's kind (see the module docstring), from transformers' auto mappings."""
    m = _mappings()

    def has(name: str) -> bool:
        return model_type in getattr(m, name, {})

    if has("MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES") or has("MODEL_FOR_CTC_MAPPING_NAMES") \
            or has("MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES"):
        return "audio"
    if has("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES"):
        return "seq2seq"
    if has("MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES") or has(
            "MODEL_FOR_ZERO_SHOT_IMAGE_CLASSIFICATION_MAPPING_NAMES") or has(
            "MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES"):
        return "multimodal"
    if has("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES") and not has("MODEL_FOR_MASKED_LM_MAPPING_NAMES"):
        return "decoder"
    if has("MODEL_FOR_IMAGE_MAPPING_NAMES") or has(
            "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES"):
        return "vision"
    return "encoder"


def model_types() -> list[str]:
    """Every model type with a base model class, in name order."""
    return sorted(_mappings().MODEL_MAPPING_NAMES)


def _shrunk(cls: Any) -> dict[str, Any]:
    """The keyword arguments that make config class `cls` tiny (its sub-configs too)."""
    default = cls()
    have = default.to_dict()
    out: dict[str, Any] = {}
    for key, value in OVERRIDES.items():
        if isinstance(have.get(key), int) and not isinstance(have.get(key), bool):
            out[key] = value
    for key in LIST_DEPTHS:
        if isinstance(have.get(key), list):
            out[key] = [1] * len(have[key])
    for key in LIST_WIDTHS:
        if isinstance(have.get(key), list):
            out[key] = [16 * (i + 1) for i in range(len(have[key]))]
    for key in LIST_HEADS:
        if isinstance(have.get(key), list):
            out[key] = [1] * len(have[key])
    if isinstance(have.get("layer_types"), list):
        layers = out.get("num_hidden_layers", 2)
        out["layer_types"] = list(have["layer_types"][:layers])
    names = dict.fromkeys([*getattr(cls, "sub_configs", {}), "text_config", "vision_config",
                           "audio_config", "encoder_config", "decoder_config"])
    for key in names:
        sub = getattr(default, key, None)
        if sub is not None and hasattr(sub, "to_dict"):
            out[key] = _shrunk(type(sub))
    return out


def tiny_config(model_type: str) -> Any:
    """The model type's tiny config (the module docstring's rule)."""
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    kwargs = _shrunk(cls)
    try:
        config = cls(**kwargs)
    except Exception:  # noqa: BLE001 - sub-configs as dicts refused: the flat ones only
        config = cls(**{k: v for k, v in kwargs.items() if not isinstance(v, dict)})
    with contextlib.suppress(Exception):
        config._attn_implementation = "eager"
    return config


def _field(config: Any, *names: str, default: int) -> int:
    for holder in (config, getattr(config, "vision_config", None),
                   getattr(config, "audio_config", None)):
        for name in names:
            value = getattr(holder, name, None) if holder is not None else None
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, (list, tuple)) and value and isinstance(value[0], int):
                return int(value[0])
    return default


def _inputs(model: Any, config: Any, seed: int, seq: int) -> dict[str, Any]:
    """Example inputs for the base model's forward (see the module docstring)."""
    torch = _torch()
    g = torch.Generator().manual_seed(seed)
    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")
    out: dict[str, Any] = {}
    wanted = {main}
    if "input_ids" in params and "pixel_values" in params:
        wanted |= {"input_ids", "pixel_values"}
    if "input_ids" in wanted or main == "input_ids":
        wanted.add("attention_mask")
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        wanted.add("decoder_input_ids")
    for name in params:
        if name not in wanted:
            continue
        if name in ("input_ids", "decoder_input_ids"):
            n = seq if name == "input_ids" else PAST
            out[name] = torch.randint(3, 100, (1, n), generator=g, dtype=torch.int64)
        elif name == "attention_mask":
            out[name] = torch.ones(1, seq, dtype=torch.int64)
        elif name == "pixel_values":
            c = _field(config, "num_channels", default=3)
            s = _field(config, "image_size", default=IMAGE)
            out[name] = torch.randn(1, c, s, s, generator=g)
        elif name == "input_values":
            out[name] = torch.randn(1, AUDIO, generator=g)
        elif name == "input_features":
            bins = _field(config, "num_mel_bins", "feature_size", "input_feat_per_channel",
                          default=16)
            frames = 2 * _field(config, "max_source_positions", default=8)
            out[name] = torch.randn(1, bins, frames, generator=g)
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty
               and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and n != "self"
               and n not in out]
    if missing or not out:
        raise ValueError(f"no recipe for the input(s) {', '.join(missing) or main!r}")
    return out


def _tensors(output: Any) -> list[tuple[str, Any]]:
    """(name, tensor) of a model output's top-level tensors."""
    torch = _torch()
    items = output.items() if hasattr(output, "items") else enumerate(
        output if isinstance(output, (tuple, list)) else [output])
    return [(str(k), v) for k, v in items if isinstance(v, torch.Tensor)]


class _Wrapper:
    """Factory of the positional-argument module exported (torch imported lazily)."""

    @staticmethod
    def make(model: Any, names: list[str], keys: list[str], extra: dict[str, Any],
             past_layers: int = 0, cache_arg: str = "") -> Any:
        torch = _torch()

        class Wrapped(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, *tensors: Any) -> tuple[Any, ...]:
                kwargs = dict(zip(names, tensors, strict=False))
                if past_layers:
                    from transformers import DynamicCache

                    flat = tensors[len(names):]
                    pairs = [(flat[2 * i], flat[2 * i + 1]) for i in range(past_layers)]
                    kwargs[cache_arg] = DynamicCache(pairs, config=self.model.config)
                out = self.model(**kwargs, **extra)
                tensors_out = dict(_tensors(out))
                result = [tensors_out[k] for k in keys]
                if past_layers:
                    cache = getattr(out, cache_arg, None)
                    result += [t for layer in cache.layers for t in (layer.keys, layer.values)]
                return tuple(result)

        return Wrapped()


def build(model_type: str, variant: str = "base", seed: int = 0
          ) -> tuple[Any, dict[str, Any], list[str]]:
    """(module whose forward takes the inputs positionally, inputs by name, output names)."""
    torch = _torch()
    from transformers import AutoModel

    config = tiny_config(model_type)
    torch.manual_seed(seed)
    model = AutoModel.from_config(config).eval()
    params = inspect.signature(model.forward).parameters
    extra: dict[str, Any] = {"return_dict": True} if "return_dict" in params else {}
    if variant == "base":
        inputs = _inputs(model, config, seed, SEQ)
        if "use_cache" in params:
            extra["use_cache"] = False
        with torch.no_grad():
            out = model(**inputs, **extra)
        keys = [k for k, _ in _tensors(out)]
        if not keys:
            raise ValueError("the base model returns no tensor")
        names = list(inputs)
        return _Wrapper.make(model, names, keys, extra), inputs, keys
    cache_arg = next((a for a in ("cache", "past_key_values") if a in params), "")
    if not cache_arg or "use_cache" not in params:
        raise ValueError("the base model takes no cache")
    extra["use_cache"] = True
    first = _inputs(model, config, seed, PAST)
    with torch.no_grad():
        out = model(**first, **extra)
    cache = getattr(out, cache_arg, None)
    if cache is None or not hasattr(cache, "layers"):
        raise ValueError(f"the base model returns no {cache_arg} with layers")
    g = torch.Generator().manual_seed(seed + 1)
    past = {}
    for i, layer in enumerate(cache.layers):
        past[f"past_key_values.{i}.key"] = torch.randn(*layer.keys.shape, generator=g)
        past[f"past_key_values.{i}.value"] = torch.randn(*layer.values.shape, generator=g)
    step = _inputs(model, config, seed + 2, PAST)
    step["attention_mask"] = torch.ones(1, 2 * PAST, dtype=torch.int64)
    names = list(step)
    with torch.no_grad():
        keys = [k for k, _ in _tensors(model(**step, **extra)) if k != cache_arg]
    module = _Wrapper.make(model, names, keys, extra, len(cache.layers), cache_arg)
    present = [n.replace("past_key_values", "present") for n in past]
    return module, {**step, **past}, keys + present


def make(path: Path, model_type: str = "bert", variant: str = "base", seed: int = 0) -> None:
    """Write the tiny `model_type` as `variant` to `path` (the generator protocol)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    with _quiet():
        torch = _torch()
        _require("transformers")
        try:
            module, inputs, outputs = build(model_type, variant, seed)
            with torch.no_grad():
                torch.onnx.export(module, tuple(inputs.values()), str(path),
                                  input_names=list(inputs), output_names=outputs,
                                  opset_version=OPSET, do_constant_folding=True, dynamo=False)
        except (ModuleNotFoundError, ValueError):
            raise
        except Exception as exc:  # noqa: BLE001 - the exporters' messages print whole graphs
            raise ExportError(first_line(exc)) from None


class ExportError(RuntimeError):
    """Building or exporting the model failed: `Type: first line` of the original error."""


def first_line(exc: BaseException, limit: int = 300) -> str:
    """`Type: first line of the message` (at most `limit` characters)."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def manifest_text(rows: list[tuple[str, str]], version: str) -> str:
    """The sweep manifest: (model type, kind) rows, decoders twice (base, with_past)."""
    lines = [
        "# The Hugging Face transformers sweep (generated by models/make_hf_sweep.py",
        "# --manifest; do not edit): a tiny random-weight model of every transformers model",
        f"# type with a base model class (transformers {version}), exported by torch.onnx",
        "# (TorchScript, opset 17); decoders also as a step with past key values. Run it with",
        "# `webnn-convert zoo models/sweep_hf.toml --jobs 2 --report DIR` (the transformers",
        "# extra); the per-family table: `python -m converter.zoo.sweep DIR/report.json`.",
        "# Results: docs/sweeps.md.",
        "",
    ]
    feeds = ('inputs = { input_ids = { dtype = "int64", range = [3, 100] }, '
             'decoder_input_ids = { dtype = "int64", range = [3, 100] }, '
             "attention_mask = { value = 1 }, token_type_ids = { value = 0 } }")
    for model_type, k in rows:
        for variant in VARIANTS if k == "decoder" else ("base",):
            suffix = "" if variant == "base" else "_with_past"
            lines += [
                "[[model]]",
                f'name = "hf_{model_type}{suffix}"',
                f'source = "generated:{SCRIPT}"',
                f'args = {{ model_type = "{model_type}", variant = "{variant}" }}',
                f'family = "{model_type}"',
                f'kind = "{k}"',
                f'variant = "{variant}"',
                'licence = "random weights generated by the project (Apache-2.0); '
                'architecture from Hugging Face transformers (Apache-2.0)"',
                f'description = "transformers {model_type} ({k}), tiny random config, '
                f'torch.onnx TorchScript export, {variant}"',
                feeds,
                "tolerance = { atol = 0.001, rtol = 0.001 }",
                "",
            ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_type", nargs="?")
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--variant", choices=VARIANTS, default="base")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--manifest", type=Path, help="write the sweep manifest here")
    args = parser.parse_args(argv)
    if args.manifest:
        import transformers

        rows = [(t, kind(t)) for t in model_types()]
        args.manifest.write_text(manifest_text(rows, transformers.__version__),
                                 encoding="utf-8")
        print(f"{len(rows)} model types -> {args.manifest}")
        return 0
    if not args.model_type or not args.out:
        parser.error("give MODEL_TYPE OUT, or --manifest FILE")
    make(args.out, args.model_type, args.variant, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
