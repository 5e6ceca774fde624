"""The step graphs of a decoder: which static shapes one step of S tokens after `past` cached
ones takes (`step_dims`, used by `converter.validate.generate.Decoder`), and the graph set of
the JavaScript generator (`generator_graphs`: a one-token decode graph and a prefill graph of
`chunk` tokens over a fixed-size KV buffer, as `converter.io.export.generator_js` exports).

```python
from converter.validate.decoder_graphs import generator_graphs
graphs = generator_graphs("model.onnx", max_length=128, chunk=16, target="chromium-tflite")
export(graphs, "out", format="js")      # model.js (createGenerator), model.html, ...
```

Two cache layouts, both a fixed number of rows:

- "in-place": the model writes its KV cache in place (present as long as the past buffer,
  the new rows at the positions the attention mask gives: GroupQueryAttention as the
  onnxruntime-genai model builder writes it); the mask [1, max_length] has ones on the rows
  in use.
- "sliding": a decoder whose present KV is Concat(past, new) (GPT-2 as TorchScript and
  Optimum export it) steps over a window of `max_length` past rows whose valid ones are the
  last p (left padding, masked: the mask is [1, max_length + S]); its present has
  max_length + S rows, and the generator keeps the last max_length of them. Positions come
  from a position_ids input; a model without one gets it by a rewrite of its position
  lookup (`converter.validate.decoder_positions`; refused with an InvalidModel naming the
  output when no single lookup qualifies).
The KV buffer length `max_length` defaults to 256, or the `context_length` of a
genai_config.json beside the model when smaller.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from converter.conversion.pipeline import convert
from converter.core.errors import ConversionError, InvalidModel
from converter.io.export.generator_js import GeneratorGraphs
from converter.validate.decoder_layout import DecoderLayout, decoder_layout
from converter.validate.decoder_positions import with_position_input
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

    def step(seq: int, path: str | os.PathLike[str], lay: DecoderLayout, past: int,
             buffer: int) -> Any:
        free_dims, input_dims = step_dims(lay, seq, past, buffer)
        return convert(path, free_dims=free_dims, input_dims=input_dims or None,
                       **options).graph

    def grows(graph: Any, seq: int) -> int | None:
        """How many rows a step adds to the KV cache (0: written in place), or None."""
        added = {tuple(graph.outputs[q].shape)[2] - tuple(graph.inputs[p].shape)[2]
                 for p, q in zip(layout.past, layout.present, strict=True)}
        return next(iter(added)) if len(added) == 1 and added <= {0, seq} else None

    failure: ConversionError | None = None
    decode: Any = None
    try:
        decode = step(1, model, layout, 0, max_length)
    except ConversionError as exc:  # e.g. a mask of the buffer's length against L + 1 keys
        failure = exc
    if decode is not None and grows(decode, 1) == 0:
        prefill = step(chunk, model, layout, 0, max_length) if 1 < chunk < max_length else None
        return GeneratorGraphs(decode, prefill, chunk if prefill is not None else 0,
                               max_length, layout.input_ids, layout.attention_mask,
                               layout.position_ids, layout.past, layout.present,
                               layout.logits, name=name)
    return _sliding(model, layout, max_length, chunk, name, step, grows, failure)


def _sliding(model: str | os.PathLike[str], layout: DecoderLayout, max_length: int,
             chunk: int, name: str, step: Any, grows: Any,
             failure: ConversionError | None) -> GeneratorGraphs:
    """The graphs of a decoder that appends to its cache: over a KV window of `max_length`
    rows, positions from an input (`decoder_positions`), present `max_length` + S rows.
    `failure`: why the in-place step did not convert (raised when this fails too)."""
    refusal = (f"{model}: output {layout.present[0]!r} does not keep the KV buffer's length: "
               "the model appends to its cache (Concat of past and new)")
    if layout.position_ids is None:
        rewritten = with_position_input(model)
        if rewritten is None and failure is not None:
            raise failure
        if rewritten is None:
            raise InvalidModel(f"{refusal} and derives its positions from the past length "
                               "in a way the generator cannot feed (no single position-"
                               "embedding lookup found)")
        with tempfile.TemporaryDirectory(prefix="webnn-decoder-") as tmp:
            path = Path(tmp) / "model.onnx"
            path.write_bytes(rewritten.SerializeToString())
            lay = decoder_layout(path, (layout.kv_heads, layout.head_size))
            return _sliding_steps(path, lay, max_length, chunk, name, step, grows, refusal)
    return _sliding_steps(model, layout, max_length, chunk, name, step, grows, refusal)


def _sliding_steps(path: str | os.PathLike[str], lay: DecoderLayout, max_length: int,
                   chunk: int, name: str, step: Any, grows: Any, refusal: str
                   ) -> GeneratorGraphs:
    graphs = []
    for seq in (1, chunk) if 1 < chunk < max_length else (1,):
        graph = step(seq, path, lay, max_length, 0)
        if grows(graph, seq) != seq:
            raise InvalidModel(f"{refusal} by other than the step's tokens")
        graphs.append(graph)
    assert lay.attention_mask is not None and lay.position_ids is not None
    return GeneratorGraphs(graphs[0], graphs[1] if len(graphs) > 1 else None,
                           chunk if len(graphs) > 1 else 0, max_length, lay.input_ids,
                           lay.attention_mask, lay.position_ids, lay.past, lay.present,
                           lay.logits, name=name, cache="sliding")
