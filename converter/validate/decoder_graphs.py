"""The step graphs of a decoder: which static shapes one step of S tokens after `past` cached
ones takes (`step_dims`, used by `converter.validate.generate.Decoder`), and the graph set of
the JavaScript generator (`generator_graphs`: a one-token decode graph and a prefill graph of
`chunk` tokens over a fixed-size KV buffer, as `converter.io.export.generator_js` exports).

```python
from converter.validate.decoder_graphs import generator_graphs
graphs = generator_graphs("model.onnx", max_length=128, chunk=16, target="chromium-tflite")
export(graphs, "out", format="js")      # model.js (createGenerator), model.html, ...
```

Restrictions: the model must write its KV cache in place (present as long as the past
buffer, the new rows at the positions the attention mask gives: GroupQueryAttention as the
onnxruntime-genai model builder writes it); a decoder whose present KV is Concat(past, new)
(TorchScript and Optimum exports) is refused with an InvalidModel naming the output, since
its step graphs depend on the past length (its positions too, where they are not an input).
The KV buffer length `max_length` defaults to 256, or the `context_length` of a
genai_config.json beside the model when smaller.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from converter.conversion.pipeline import convert
from converter.core.errors import InvalidModel
from converter.io.export.generator_js import GeneratorGraphs
from converter.validate.decoder_layout import DecoderLayout, decoder_layout
from converter.validate.inspect import inspect_model

__all__ = ["DEFAULT_CHUNK", "DEFAULT_MAX_LENGTH", "generator_graphs", "is_decoder",
           "step_dims"]

DEFAULT_MAX_LENGTH = 256
DEFAULT_CHUNK = 16


def step_dims(layout: DecoderLayout, seq: int, past: int, buffer: int
              ) -> tuple[dict[str, int], dict[str, dict[int, int]]]:
    """The free dimensions (`free_dims`, `input_dims` of `convert`) of a step of `seq` tokens
    after `past` cached ones; `buffer` > 0: a fixed KV buffer of that many rows (the mask
    as long as the buffer), 0: the growing cache (past rows, mask past + seq)."""
    total = buffer if buffer else past + seq
    rows = buffer if buffer else past
    want: dict[str, tuple[int, ...]] = {layout.input_ids: (1, seq)}
    if layout.attention_mask:
        want[layout.attention_mask] = (1, total)
    if layout.position_ids:
        want[layout.position_ids] = (1, seq)
    for p in layout.past:
        want[p] = (1, layout.kv_heads, rows, layout.head_size)
    named: dict[str, int] = {}
    unnamed: dict[str, dict[int, int]] = {}
    for name, shape in want.items():
        declared = layout.shapes[name]
        if len(declared) != len(shape):
            raise InvalidModel(f"input {name!r} has rank {len(declared)}, the decoder "
                               f"feeds rank {len(shape)}")
        for axis, (d, size) in enumerate(zip(declared, shape, strict=True)):
            if isinstance(d, int):
                if d != size:
                    raise InvalidModel(f"input {name!r} has the fixed dimension {d} at "
                                       f"axis {axis}; this step needs {size}")
            elif isinstance(d, str):
                if named.setdefault(d, size) != size:
                    raise InvalidModel(f"free dimension {d!r} would need both "
                                       f"{named[d]} and {size} in one step")
            else:
                unnamed.setdefault(name, {})[axis] = size
    return named, unnamed


def is_decoder(model: str | os.PathLike[str]) -> bool:
    """Whether `model` (a path) carries a KV cache: an input with "past" in its name and an
    output with "present" in its name (what `webnn-convert convert --format js` exports as
    a generator; `decoder_layout` says what else it needs)."""
    info = inspect_model(model)
    return (any("past" in t.name for t in info.inputs)
            and any("present" in t.name for t in info.outputs))


def _context_length(model: str | os.PathLike[str]) -> int | None:
    config = Path(model).parent / "genai_config.json"
    if not config.is_file():
        return None
    value = json.loads(config.read_text(encoding="utf-8")).get("model", {}).get(
        "context_length")
    return int(value) if isinstance(value, int) and value > 0 else None


def generator_graphs(model: str | os.PathLike[str], *, max_length: int | None = None,
                     chunk: int = DEFAULT_CHUNK, kv_shape: tuple[int, int] | None = None,
                     name: str = "decoder", **options: Any) -> GeneratorGraphs:
    """Convert the decode step (1 token) and the prefill step (`chunk` tokens; none when
    `chunk` is 0 or not below `max_length`) of the decoder `model` over a KV buffer of
    `max_length` rows (module docstring); `options` go to `convert` (target, precision,
    budgets, allow_roots). InvalidModel when the model is no decoder or does not write its
    cache in place."""
    layout = decoder_layout(model, kv_shape)
    if layout.attention_mask is None:
        raise InvalidModel(f"{model}: the generator's fixed-size KV buffer needs an "
                           "attention_mask input")
    if max_length is None:
        max_length = min(DEFAULT_MAX_LENGTH, _context_length(model) or DEFAULT_MAX_LENGTH)
    if max_length < 2:
        raise ValueError(f"generator: max_length must be >= 2, got {max_length}")
    if chunk < 0:
        raise ValueError(f"generator: chunk must be >= 0, got {chunk}")

    def step(seq: int) -> Any:
        free_dims, input_dims = step_dims(layout, seq, 0, max_length)
        graph = convert(model, free_dims=free_dims, input_dims=input_dims or None,
                        **options).graph
        for p, q in zip(layout.past, layout.present, strict=True):
            have = tuple(graph.outputs[q].shape)
            if have != tuple(graph.inputs[p].shape):
                raise InvalidModel(
                    f"{model}: output {q!r} is {list(have)} for a KV buffer of {max_length} "
                    f"rows: the model appends to its cache (Concat of past and new) instead of "
                    "writing it in place, so its steps need one graph per past length; the "
                    "generator export needs an in-place cache (GroupQueryAttention, as the "
                    "onnxruntime-genai model builder writes it)")
        return graph

    decode = step(1)
    prefill = step(chunk) if 1 < chunk < max_length else None
    return GeneratorGraphs(decode, prefill, chunk if prefill is not None else 0, max_length,
                           layout.input_ids, layout.attention_mask, layout.position_ids,
                           layout.past, layout.present, layout.logits, name=name)
