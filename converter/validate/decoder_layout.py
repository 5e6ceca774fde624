"""Which inputs and outputs of a decoder-only model carry what (`decoder_layout`): the token
ids, the attention mask, the position ids, the past key/value inputs and the present outputs
they pair with, the logits, and the KV cache's head count and head size.

Restrictions: the past inputs are recognised by name ("past" in the name, rank 4, [batch,
kv_heads, past, head]) and matched to the outputs with "present" in their name; kv_heads and
head size come from the declared shapes, else from a genai_config.json beside the model, else
the caller's `kv_shape`. Any other input makes the model no decoder (InvalidModel).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from converter.core.errors import InvalidModel
from converter.core.ir import Dim
from converter.validate.inspect import inspect_model

__all__ = ["DecoderLayout", "decoder_layout"]


@dataclass(frozen=True)
class DecoderLayout:
    """Which inputs and outputs of a decoder carry what (see the module docstring)."""

    input_ids: str
    attention_mask: str | None
    position_ids: str | None
    past: tuple[str, ...]
    present: tuple[str, ...]
    logits: str
    kv_heads: int
    head_size: int
    dtypes: Mapping[str, str]
    shapes: Mapping[str, tuple[Dim, ...]]


def _find(names: Sequence[str], word: str) -> str | None:
    hits = [n for n in names if word in n]
    return hits[0] if len(hits) == 1 else None


def _present_name(past: str, outputs: Sequence[str]) -> str | None:
    for old, new in (("past_key_values", "present"), ("past", "present")):
        if old in past and past.replace(old, new, 1) in outputs:
            return past.replace(old, new, 1)
    return None


def _genai_kv(model: str | os.PathLike[str] | None) -> tuple[int, int] | None:
    if model is None:
        return None
    config = Path(model).parent / "genai_config.json"
    if not config.is_file():
        return None
    decoder = json.loads(config.read_text(encoding="utf-8")).get("model", {}).get("decoder", {})
    if "num_key_value_heads" in decoder and "head_size" in decoder:
        return int(decoder["num_key_value_heads"]), int(decoder["head_size"])
    return None


def decoder_layout(model: str | os.PathLike[str], kv_shape: tuple[int, int] | None = None
                   ) -> DecoderLayout:
    """The layout of the decoder `model` (a path); InvalidModel when it is not a decoder
    with past/present KV the driver understands."""
    info = inspect_model(model)
    ins = {t.name: t for t in info.inputs}
    outs = [t.name for t in info.outputs]
    ids = "input_ids" if "input_ids" in ins else _find(list(ins), "input_ids")
    if ids is None:
        raise InvalidModel(f"{model}: no input_ids input (inputs: {sorted(ins)})")
    mask = _find(list(ins), "attention_mask")
    positions = _find(list(ins), "position_ids")
    past = tuple(n for n in ins if "past" in n)
    other = sorted(set(ins) - {ids, mask, positions, *past} - {None})
    if other:
        raise InvalidModel(f"{model}: inputs {other} are not input_ids, attention_mask, "
                           "position_ids or past key values")
    if not past:
        raise InvalidModel(f"{model}: no past key/value inputs (a decoder without a KV cache)")
    present = tuple(_present_name(p, outs) or "" for p in past)
    if not all(present):
        raise InvalidModel(f"{model}: no present output for past input(s) "
                           f"{[p for p, q in zip(past, present, strict=True) if not q]}")
    logits = "logits" if "logits" in outs else next(
        (n for n in outs if n not in present), "")
    if not logits:
        raise InvalidModel(f"{model}: no logits output")
    shapes: dict[str, tuple[Dim, ...]] = {}
    for t in info.inputs:
        if t.shape is None:
            raise InvalidModel(f"{model}: input {t.name!r} has an unknown rank")
        shapes[t.name] = tuple(t.shape)
    for p in past:
        if len(shapes[p]) != 4:
            raise InvalidModel(f"{model}: past input {p!r} must be [batch, kv_heads, past, "
                               f"head], got {shapes[p]}")
    declared = {(shapes[p][1], shapes[p][3]) for p in past}
    heads_size: tuple[int, int] | None = None
    if len(declared) == 1:
        h, d = next(iter(declared))
        if isinstance(h, int) and isinstance(d, int):
            heads_size = (h, d)
    heads_size = kv_shape or heads_size or _genai_kv(model)
    if heads_size is None:
        raise InvalidModel(f"{model}: the number of KV heads and the head size are not "
                           f"declared ({shapes[past[0]]}); give kv_shape=(kv_heads, head_size)")
    return DecoderLayout(ids, mask, positions, past, present, logits, int(heads_size[0]),
                         int(heads_size[1]), {t.name: t.dtype for t in info.inputs}, shapes)
