"""Greedy generation with a decoder-only model that carries its KV cache as inputs and outputs
(`input_ids`, `attention_mask`, optional `position_ids`, `past_key_values.N.key/value`
[B, kv_heads, past, head] -> `logits`, `present.N.key/value`, as the onnxruntime-genai model
builder and Optimum write them), through the converter, next to the same loop run by
onnxruntime on the original model (the oracle) and by onnxruntime-genai.

```python
from converter.validate.generate import Decoder, OnnxRuntimeDecoder
ours = Decoder("model.onnx", backend="onnxruntime")          # kv_shape=(2, 16) if not declared
run = ours.generate([5, 17, 42], max_new_tokens=16)          # Generation: .tokens, .logits
oracle = OnnxRuntimeDecoder("model.onnx").generate([5, 17, 42], max_new_tokens=16)
assert run.tokens == oracle.tokens
```

Every WebNN operand has a static shape, so the converter makes one graph per step shape,
converted on first use and kept (`Decoder.graphs`). Two cache layouts:

- "growing" (the model as exported): a step of S new tokens after p cached ones is its own
  graph (past length p, total p + S). The first prompt has past length 0: the free dimension
  is set to 0, the empty past inputs become constants and the graph is specialised (no
  zero-size tensors); every decode step (S = 1) after it is a new graph.
- "fixed": the past is a buffer of `max_length` rows and the attention mask is
  [1, max_length] with ones on the rows in use, so the step shape depends on S only: one
  graph for the prompt (or each chunk size) and ONE graph for every decode step. This needs a
  model whose present KV has the length of its past (it writes the new rows into the buffer
  at the positions the mask gives: GroupQueryAttention with seqlens_k computed from the mask,
  as the genai builder writes it); "auto" (the default) uses it when the converted graph
  shows that, and "growing" otherwise.

Chunked prefill: `chunk=C` feeds the prompt C tokens at a time (past length growing by C).
Timings: `Generation.prefill_s` (the prompt steps), `decode_s` (the steps after the first
generated token, each producing one more; `decode_cpu_s` their process CPU time) and
`convert_s` (graphs converted during the run, not counted in the others; a `Decoder` keeps
its graphs, so a second `generate()` converts nothing).

Tokens: greedy (argmax, ties to the lowest id) or seeded sampling (`sampling=`, defined in
`converter.validate.sampling` and docs/generation.md), which draws the same tokens as the
JavaScript generator (`webnn-convert convert DECODER --format js`,
`converter.validate.decoder_graphs`) given the same logits.

Restrictions: batch 1; the past
inputs are recognised by name ("past" in the name, rank 4, [batch, kv_heads, past, head])
and matched to the outputs with "present" in their name; kv_heads and head size come from
the declared shapes, else from a genai_config.json beside the model, else `kv_shape`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from converter.conversion.pipeline import convert
from converter.core.errors import ConversionError, InvalidModel
from converter.core.isolate import isolated
from converter.io.export.exporter import export, load
from converter.validate.decoder_graphs import step_dims
from converter.validate.decoder_layout import DecoderLayout, decoder_layout
from converter.validate.sampling import Sampling, TokenChooser, sampling_of

__all__ = ["CACHE_MODES", "Decoder", "Generation", "OnnxRuntimeDecoder", "genai_generate"]

CACHE_MODES = ("auto", "fixed", "growing")


@dataclass
class Generation:
    """What a run gives: the generated `tokens` (the prompt excluded), the logits
    [vocab] each of them was chosen from, and timings (see the module docstring)."""

    tokens: list[int]
    logits: list[np.ndarray] = field(repr=False)
    prefill_s: float = 0.0
    decode_s: float = 0.0
    convert_s: float = 0.0
    graphs: int = 0
    decode_cpu_s: float = 0.0

    @property
    def decode_tokens_per_s(self) -> float:
        """Tokens per second of the decode steps (the first token, which the prompt gives,
        is not counted)."""
        steps = len(self.tokens) - 1
        return steps / self.decode_s if steps > 0 and self.decode_s > 0 else float("nan")

    @property
    def decode_cpu_tokens_per_s(self) -> float:
        """The same over the process CPU time of the decode steps (steadier on a loaded
        machine; with several threads it also counts threads spinning while they wait)."""
        steps = len(self.tokens) - 1
        cpu = self.decode_cpu_s
        return steps / cpu if steps > 0 and cpu > 0 else float("nan")


class _GreedyLoop:
    """The generation loop shared by our runtime and the onnxruntime oracle: feeds the steps,
    carries the KV cache and chooses the tokens; subclasses run one step (`_run`)."""

    def __init__(self, layout: DecoderLayout, cache: str) -> None:
        if cache not in CACHE_MODES:
            raise ValueError(f"cache must be one of {', '.join(CACHE_MODES)}, got {cache!r}")
        if cache == "fixed" and layout.attention_mask is None:
            raise InvalidModel("a fixed-size KV buffer needs an attention_mask input")
        self.layout, self.cache = layout, cache
        self._convert_s = 0.0
        self.kv: dict[str, np.ndarray] | None = None

    # one step of S tokens after `past` cached ones (buffer: the past inputs' length)
    def _run(self, feeds: dict[str, np.ndarray], seq: int, past: int, buffer: int
             ) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _feeds(self, ids: np.ndarray, past_len: int, kv: Mapping[str, np.ndarray],
               buffer: int) -> dict[str, np.ndarray]:
        lay = self.layout
        seq = ids.shape[1]
        feeds: dict[str, np.ndarray] = {lay.input_ids: ids.astype(lay.dtypes[lay.input_ids])}
        if lay.attention_mask is not None:
            width = buffer if buffer else past_len + seq
            mask = np.zeros((1, width), lay.dtypes[lay.attention_mask])
            mask[0, :past_len + seq] = 1
            feeds[lay.attention_mask] = mask
        if lay.position_ids is not None:
            feeds[lay.position_ids] = np.arange(past_len, past_len + seq).reshape(1, seq) \
                .astype(lay.dtypes[lay.position_ids])
        feeds.update(kv)
        return feeds

    def _empty_kv(self, rows: int) -> dict[str, np.ndarray]:
        lay = self.layout
        return {p: np.zeros((1, lay.kv_heads, rows, lay.head_size), lay.dtypes[p])
                for p in lay.past}

    def logits_of(self, chunks: Sequence[Sequence[int]], max_length: int | None = None
                  ) -> list[np.ndarray]:
        """Run the steps `chunks` (token lists fed one after the other, the cache carried)
        and return each step's logits [S, vocab]."""
        total = sum(len(c) for c in chunks)
        buffer = self._buffer(max_length or total)
        kv = self._empty_kv(buffer)
        past, out = 0, []
        for chunk in chunks:
            logits, kv = self._step(np.asarray([chunk], np.int64), past, kv, buffer)
            past += len(chunk)
            out.append(logits)
        return out

    def _buffer(self, max_length: int) -> int:
        """The KV buffer length for a run of up to `max_length` cached positions (0: the
        growing cache)."""
        return max_length if self.cache == "fixed" else 0

    def _step(self, ids: np.ndarray, past_len: int, kv: dict[str, np.ndarray], buffer: int
              ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        lay = self.layout
        outputs = self._run(self._feeds(ids, past_len, kv, buffer), ids.shape[1], past_len,
                            buffer)
        new_kv = {p: outputs[q] for p, q in zip(lay.past, lay.present, strict=True)}
        return np.asarray(outputs[lay.logits])[0], new_kv

    def generate(self, prompt_ids: Sequence[int], max_new_tokens: int = 16, *,
                 eos_token_id: int | Sequence[int] | None = None,
                 sampling: Sampling | Mapping[str, Any] | str | None = None,
                 on_token: Callable[[int, int], object] | None = None,
                 chunk: int | None = None, max_length: int | None = None) -> Generation:
        """Generate up to `max_new_tokens` after `prompt_ids` (token ids), starting from an
        empty cache: the same interface as the JavaScript generator's `generate`. Stops
        after a token of `eos_token_id` (an id or several); `sampling`: None or "greedy"
        (argmax), or a `Sampling` / {top_k | topK, top_p | topP, temperature, seed}
        (`converter.validate.sampling`: the JavaScript generator draws the same tokens from
        the same logits); `on_token(id, index)` is called as each token is chosen. The
        prompt is fed in steps of `chunk` tokens (default: at once). `max_length` is the KV
        buffer length of the "fixed" cache (default prompt + max_new_tokens)."""
        prompt = [int(t) for t in prompt_ids]
        if not prompt:
            raise ValueError("generate: the prompt is empty")
        if max_new_tokens < 1:
            raise ValueError("generate: max_new_tokens must be >= 1")
        step = chunk or len(prompt)
        if step < 1:
            raise ValueError(f"generate: chunk must be >= 1, got {chunk}")
        need = len(prompt) + max_new_tokens - 1
        if max_length is not None and max_length < need:
            raise ValueError(f"generate: max_length {max_length} is less than the prompt "
                             f"plus the new tokens ({need} cached positions)")
        stops = {int(eos_token_id)} if isinstance(eos_token_id, int) else {
            int(t) for t in eos_token_id or ()}
        choose = TokenChooser(sampling_of(dict(sampling) if isinstance(sampling, Mapping)
                                          else sampling))
        self._convert_s = 0.0
        graphs_before = self._graph_count()
        buffer = self._buffer(max_length or need)
        kv = self._empty_kv(buffer)
        tokens: list[int] = []
        chosen: list[np.ndarray] = []
        start = time.perf_counter()
        past = 0
        logits = np.zeros(0)
        for at in range(0, len(prompt), step):
            piece = np.asarray([prompt[at:at + step]], np.int64)
            logits, kv = self._step(piece, past, kv, buffer)
            past += piece.shape[1]
        prefill = time.perf_counter() - start
        convert_prefill = self._convert_s
        cpu_start, start = time.process_time(), time.perf_counter()
        while True:
            last = np.asarray(logits[-1])
            token = choose(last)
            tokens.append(token)
            chosen.append(last)
            if on_token is not None:
                on_token(token, len(tokens) - 1)
            if len(tokens) == max_new_tokens or token in stops:
                break
            logits, kv = self._step(np.asarray([[token]], np.int64), past, kv, buffer)
            past += 1
        self.kv = kv
        decode, decode_cpu = time.perf_counter() - start, time.process_time() - cpu_start
        converting = self._convert_s - convert_prefill
        return Generation(tokens, chosen, prefill_s=prefill - convert_prefill,
                          decode_s=decode - converting, convert_s=self._convert_s,
                          graphs=self._graph_count() - graphs_before,
                          decode_cpu_s=max(decode_cpu - converting, 0.0))

    def _graph_count(self) -> int:
        return 0

    def reset(self) -> None:
        """Drop the KV cache of the last `generate()` (kept in `kv` until then; each
        `generate()` starts from an empty cache anyway)."""
        self.kv = None


@dataclass
class _Graph:
    """One converted step graph and its session on the decoder's backend
    (`ConversionResult.compile`: budgets checked and feeds prepared once, so a step costs
    the backend's run and a feed check)."""

    result: Any
    run: Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]


class Decoder(_GreedyLoop):
    """Greedy generation through the converter: each step shape converted once (see the
    module docstring), run on `backend` ("reference", "onnxruntime", "torch"; `threads` for
    the latter two). `exported=True` exports every converted graph as a .webnn file (with
    its weights, in a temporary folder, or under `export_dir`) and runs the graph
    `converter.load` reads back instead of the converted one. `target` is the conversion's
    (`convert(target=...)`): "spec" by default, the unrestricted graph the Python backends
    run fastest (a browser's rewrites, such as int64 narrowed to int32, cost them about a
    third of the decode speed); the browser's generator converts for the default target
    (`decoder_graphs.generator_graphs`)."""

    def __init__(self, model: str | os.PathLike[str], *, backend: str = "reference",
                 device: str = "cpu", threads: int = 0, cache: str = "auto",
                 kv_shape: tuple[int, int] | None = None, exported: bool = False,
                 export_dir: str | os.PathLike[str] | None = None,
                 target: str = "spec") -> None:
        layout = decoder_layout(model, kv_shape)
        super().__init__(layout, cache)
        self.model, self.target = model, target
        self.backend, self.device, self.threads = backend, device, threads
        self.exported = exported or export_dir is not None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if self.exported and export_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="webnn-generate-")
            export_dir = self._tmp.name
        self.export_dir = Path(export_dir) if export_dir is not None else None
        self.graphs: dict[tuple[int, int, int], _Graph] = {}

    def close(self) -> None:
        """Remove the temporary export folder (if any)."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Decoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _graph_count(self) -> int:
        return len(self.graphs)

    def _buffer(self, max_length: int) -> int:
        if self.cache == "auto":
            self.cache = "fixed" if self._writes_in_place(max_length) else "growing"
        return super()._buffer(max_length)

    def _writes_in_place(self, buffer: int) -> bool:
        """Whether a decode step over a KV buffer of `buffer` rows keeps its length (present
        as long as the past): the condition of the fixed-size cache, checked on the
        converted decode graph (which the run then uses)."""
        if self.layout.attention_mask is None:
            return False
        try:
            graph = self._graph(1, 0, buffer)
        except ConversionError:
            return False
        shapes = graph.result.graph.output_descriptors
        if all(tuple(shapes[q].shape)[2] == buffer for q in self.layout.present):
            return True
        del self.graphs[(1, 0, buffer)]
        return False

    def _graph(self, seq: int, past: int, buffer: int) -> _Graph:
        key = (seq, 0 if buffer else past, buffer)
        graph = self.graphs.get(key)
        if graph is not None:
            return graph
        start = time.perf_counter()
        free_dims, input_dims = step_dims(self.layout, seq, past, buffer)
        result = convert(self.model, free_dims=free_dims, input_dims=input_dims or None,
                         target=self.target)
        webnn_graph = result.graph
        if self.export_dir is not None:
            folder = self.export_dir / f"step_s{seq}_p{key[1]}_b{buffer}"
            if folder.exists():
                shutil.rmtree(folder)
            export(result, folder, format="webnn")
            webnn_graph = load(folder)
        if webnn_graph is not result.graph:
            result = result.with_graph(webnn_graph)
        session = result.compile(self.backend, self.device, self.threads)
        run = session.run
        graph = self.graphs[key] = _Graph(result, run)
        self._convert_s += time.perf_counter() - start
        return graph

    def _run(self, feeds: dict[str, np.ndarray], seq: int, past: int, buffer: int
             ) -> dict[str, np.ndarray]:
        return self._graph(seq, past, buffer).run(feeds)


class OnnxRuntimeDecoder(_GreedyLoop):
    """The same loop run by onnxruntime on the original model (one InferenceSession, CPU,
    `threads` intra-op threads, ORT_ENABLE_ALL): the oracle of `Decoder`. The cache is
    "growing" (the model as exported) unless `cache="fixed"`.

    Isolation (`converter.core.isolate`): the session is first created once in a forked child,
    so that a model crashing onnxruntime while it loads and optimises the graph is one
    `NativeCrash` error instead of killing this process; the session that runs is then
    created here (creation costs twice, once per decoder). The runs themselves are not
    isolated: a session's intra-op thread pool does not survive `fork`, so each step would
    have to create the session again in its child (seconds per token for a real decoder)
    and send the logits and the whole KV cache back through a pipe, which would distort the
    timings this oracle exists to measure; its feeds are the ones this loop makes from the
    model's declared layout, not a stranger's."""

    def __init__(self, model: str | os.PathLike[str], *, threads: int = 0,
                 cache: str = "growing", kv_shape: tuple[int, int] | None = None) -> None:
        import onnxruntime as ort

        layout = decoder_layout(model, kv_shape)
        super().__init__(layout, "growing" if cache == "auto" else cache)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL

        def create() -> Any:
            return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

        isolated(lambda: create() is not None, framework="onnxruntime", label=str(model))
        self.session = create()
        self._outputs = [o.name for o in self.session.get_outputs()]

    def _run(self, feeds: dict[str, np.ndarray], seq: int, past: int, buffer: int
             ) -> dict[str, np.ndarray]:
        return dict(zip(self._outputs, self.session.run(self._outputs, feeds), strict=True))


def genai_generate(model: str | os.PathLike[str] | Any, prompt: Sequence[int],
                   max_new_tokens: int = 16) -> Generation:
    """Greedy generation with onnxruntime-genai (`model`: the model builder's output folder
    with its genai_config.json, or an `og.Model` loaded from one; its own KV buffer
    handling): the tokens, with empty logits, and the timings (prefill: appending the prompt
    and the first token). Stops at the model's eos token like onnxruntime-genai does.
    ModuleNotFoundError without onnxruntime_genai."""
    import onnxruntime_genai as og

    if isinstance(model, (str, os.PathLike)):
        model = og.Model(str(model))
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + max_new_tokens, do_sample=False)
    generator = og.Generator(model, params)
    start = time.perf_counter()
    generator.append_tokens(np.asarray(prompt, np.int32))
    generator.generate_next_token()
    tokens = [int(generator.get_next_tokens()[0])]
    prefill = time.perf_counter() - start
    cpu_start, start = time.process_time(), time.perf_counter()
    while not generator.is_done() and len(tokens) < max_new_tokens:
        generator.generate_next_token()
        tokens.append(int(generator.get_next_tokens()[0]))
    return Generation(tokens, [], prefill_s=prefill, decode_s=time.perf_counter() - start,
                      decode_cpu_s=time.process_time() - cpu_start)
