"""Tiny random-weight transformer models, exported to ONNX the ways the ONNX ecosystem does.

Every model is built from a Hugging Face `transformers` config class with seeded random
weights (nothing is downloaded: no hub access, no tokenizer files): hidden size 32 (64 for
Llama / Qwen2 / Gemma / Phi-3, whose 2 key/value heads of size 16 are the smallest the genai
builder's GroupQueryAttention runs on CPU), 2 layers, 4 heads, a vocabulary of 512 tokens.
Each (model, variant) pair is one ONNX file:

| Variant | How the file is made |
|---|---|
| `torchscript` | `torch.onnx.export(..., dynamo=False)`, opset 17, dynamic batch / sequence axes |
| `dynamo` | `torch.onnx.export(..., dynamo=True)` (torch.export + onnxscript), opset 18, dynamic sequence axes |
| `with_past` | TorchScript export of a decoder step with past key values in and present ones out |
| `merged` | (GPT-2) the decoder without and with past merged into one graph by an `If` on a bool input `use_cache_branch` (the layout of Optimum's merged decoders) |
| `optimized` | the TorchScript export through `onnxruntime.transformers.optimizer.optimize_model` (com.microsoft Attention, SkipLayerNormalization, EmbedLayerNormalization, BiasGelu / FastGelu, ...) |
| `dynamo_optimized` | the dynamo export through the same optimizer |
| `fp16` / `optimized_fp16` | the TorchScript / optimized export in float16, float32 inputs and outputs kept (`keep_io_types`) |
| `int8` / `uint8` | `onnxruntime.quantization.quantize_dynamic` of the TorchScript export, QInt8 / QUInt8 weights |
| `optimized_int8` | `quantize_dynamic` (QInt8) of the optimized export (QAttention, DynamicQuantizeMatMul, ...) |
| `int4` | `MatMulNBitsQuantizer` (4 bits, block 32, symmetric) of the TorchScript export: com.microsoft MatMulNBits |
| `genai_fp32` / `genai_int4` / `genai_int8` | the onnxruntime-genai model builder (`python -m onnxruntime_genai.models.builder -e cpu`) run on a folder where the random model and a tiny word-level tokenizer are saved (`save_pretrained`): GroupQueryAttention, RotaryEmbedding, SkipSimplifiedLayerNormalization, MatMulNBits, ... with past key values |

Models (`MODELS`): bert, distilbert, roberta, vit, clip_text, clip_vision, wav2vec2,
whisper_encoder, whisper_decoder, t5_encoder, t5_decoder, bart, gpt2, llama, qwen2, gemma,
phi3. Which variants apply to which model is `VARIANTS` (a variant a model does not list
raises ValueError).

Two arguments change any TorchScript or dynamo export: `attn` (the transformers attention
implementation: "eager", the default here, or "sdpa", transformers' own default, which
exports torch's scaled_dot_product_attention) and `opset` (dynamo at opset 23 with "sdpa"
emits the ONNX Attention, RotaryEmbedding and RMSNormalization ops).

`make(path, model=..., variant=..., seq=8, past=4, seed=0, attn="eager", opset=None)` is
the generator protocol of `converter/zoo/generated.py` (models/zoo_transformers.toml names
this script as `source = "generated:make_transformers.py"` with `args = {model, variant,
...}`). Missing export dependencies raise ModuleNotFoundError (the zoo then lists the
entry as skipped): `transformers` and `torch` for every model, `onnxscript` for `dynamo*`,
`onnxruntime_genai` for `genai_*`. Install them with `pip install -e ".[transformers]"`.

Inputs (the shapes the models are traced with; every axis the ecosystem makes dynamic stays
dynamic in the file): token ids `[1, seq]` int64, attention masks `[1, seq]` (`[1, past +
seq]` with past), past key values `[1, kv_heads, past, head_dim]` float32, images `[1, 3, 16,
16]`, audio `[1, 400]` samples, Whisper log-mel features `[1, 16, 16]`.

```bash
python models/make_transformers.py bert optimized /tmp/bert_optimized.onnx
python models/make_transformers.py --list          # every (model, variant) pair
```

Restrictions: the cache key of generated models covers this file's bytes only, not the
versions of torch / transformers / onnxruntime, which change the exported graphs.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

VOCAB = 512
HIDDEN = 32
LAYERS = 2
HEADS = 4
INTERMEDIATE = 64
MAX_POSITIONS = 64
OPSET_TORCHSCRIPT = 17
OPSET_DYNAMO = 18
INT4_BLOCK = 32
LLM_HIDDEN = 64
"""Llama / Qwen2 / Gemma / Phi-3 width: head size 16, the smallest onnxruntime's CPU
GroupQueryAttention (the genai builder's attention) accepts."""


class Built:
    """A model ready to export: a module whose forward takes the inputs positionally, in
    `inputs` order, and returns the outputs as a tuple in `outputs` order. (A plain class:
    generated.py imports this script without registering it in sys.modules, which
    dataclasses need.)"""

    def __init__(self, module: Any, inputs: dict[str, Any], outputs: list[str],
                 dynamic: dict[str, dict[int, str]], optimizer: str | None = None,
                 hf_model: Any = None, extra: dict[str, Any] | None = None) -> None:
        self.module = module
        self.inputs = inputs
        """Example inputs (torch tensors) by ONNX input name, in forward order."""
        self.outputs = outputs
        self.dynamic = dynamic
        """Dynamic axes by input / output name (TorchScript `dynamic_axes`)."""
        self.optimizer = optimizer
        """`optimize_model` model_type, None when the optimizer does not apply."""
        self.hf_model = hf_model
        """The `transformers` model (save_pretrained for the genai builder)."""
        self.extra = extra or {}


class _Forward:
    """Factory of the positional-argument wrapper modules (torch imported lazily)."""

    @staticmethod
    def wrap(model: Any, names: Sequence[str], call: Callable[..., tuple[Any, ...]]) -> Any:
        """A torch module whose forward(*tensors) calls `call(model, **dict(zip(names,
        tensors)))` and returns its tuple."""
        import torch

        class Wrapper(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, *tensors: Any) -> tuple[Any, ...]:
                return call(self.model, **dict(zip(names, tensors, strict=True)))

        return Wrapper().eval()


# ----------------------------------------------------------------------------------- inputs

def _generator(seed: int) -> Any:
    import torch

    return torch.Generator().manual_seed(seed)


def _ids(seed: int, seq: int, low: int = 3, high: int = VOCAB) -> Any:
    import torch

    return torch.randint(low, high, (1, seq), generator=_generator(seed), dtype=torch.int64)


def _mask(length: int, padded: int = 2) -> Any:
    """[1, length] int64 ones with the last `padded` positions 0 (right padding)."""
    import torch

    mask = torch.ones(1, length, dtype=torch.int64)
    if padded:
        mask[0, -padded:] = 0
    return mask


def _normal(seed: int, *shape: int) -> Any:
    import torch

    return torch.randn(*shape, generator=_generator(seed), dtype=torch.float32)


def _seq_axes(*names: str) -> dict[str, dict[int, str]]:
    return {n: {0: "batch", 1: "sequence"} for n in names}


# ----------------------------------------------------------------------------------- models

def _build_bert(seq: int, seed: int, attn: str) -> Built:
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                     num_attention_heads=HEADS, intermediate_size=INTERMEDIATE,
                     max_position_embeddings=MAX_POSITIONS, attn_implementation=attn)
    model = BertModel(cfg).eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]

    def call(m: Any, **kw: Any) -> tuple[Any, ...]:
        out = m(**kw)
        return out.last_hidden_state, out.pooler_output

    import torch

    token_types = torch.zeros(1, seq, dtype=torch.int64)
    token_types[0, seq // 2:] = 1
    return Built(_Forward.wrap(model, names, call),
                 {"input_ids": _ids(seed, seq), "attention_mask": _mask(seq),
                  "token_type_ids": token_types},
                 ["last_hidden_state", "pooler_output"],
                 {**_seq_axes(*names, "last_hidden_state"), "pooler_output": {0: "batch"}},
                 optimizer="bert", hf_model=model)


def _build_distilbert(seq: int, seed: int, attn: str) -> Built:
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(vocab_size=VOCAB, dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS,
                           hidden_dim=INTERMEDIATE, max_position_embeddings=MAX_POSITIONS,
                           attn_implementation=attn)
    model = DistilBertModel(cfg).eval()
    names = ["input_ids", "attention_mask"]
    return Built(_Forward.wrap(model, names, lambda m, **kw: (m(**kw).last_hidden_state,)),
                 {"input_ids": _ids(seed, seq), "attention_mask": _mask(seq)},
                 ["last_hidden_state"], _seq_axes(*names, "last_hidden_state"),
                 optimizer="bert", hf_model=model)


def _build_roberta(seq: int, seed: int, attn: str) -> Built:
    from transformers import RobertaConfig, RobertaModel

    # position ids count the non-padding tokens (pad_token_id 1): ids drawn from [3, VOCAB)
    cfg = RobertaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                        num_attention_heads=HEADS, intermediate_size=INTERMEDIATE,
                        max_position_embeddings=MAX_POSITIONS + 2, type_vocab_size=1,
                        attn_implementation=attn)
    model = RobertaModel(cfg).eval()
    names = ["input_ids", "attention_mask"]

    def call(m: Any, **kw: Any) -> tuple[Any, ...]:
        out = m(**kw)
        return out.last_hidden_state, out.pooler_output

    return Built(_Forward.wrap(model, names, call),
                 {"input_ids": _ids(seed, seq), "attention_mask": _mask(seq)},
                 ["last_hidden_state", "pooler_output"],
                 {**_seq_axes(*names, "last_hidden_state"), "pooler_output": {0: "batch"}},
                 optimizer="bert", hf_model=model)


def _build_vit(seq: int, seed: int, attn: str) -> Built:
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=HIDDEN,
                    num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                    intermediate_size=INTERMEDIATE, attn_implementation=attn)
    model = ViTModel(cfg).eval()

    def call(m: Any, **kw: Any) -> tuple[Any, ...]:
        out = m(**kw)
        return out.last_hidden_state, out.pooler_output

    return Built(_Forward.wrap(model, ["pixel_values"], call),
                 {"pixel_values": _normal(seed, 1, 3, 16, 16)},
                 ["last_hidden_state", "pooler_output"],
                 {"pixel_values": {0: "batch"}, "last_hidden_state": {0: "batch"},
                  "pooler_output": {0: "batch"}},
                 optimizer="vit", hf_model=model)


def _clip_config(attn: str) -> Any:
    from transformers import CLIPConfig

    text = {"vocab_size": VOCAB, "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
            "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE,
            "max_position_embeddings": MAX_POSITIONS, "projection_dim": HIDDEN,
            "eos_token_id": VOCAB - 1, "bos_token_id": VOCAB - 2, "pad_token_id": 1}
    vision = {"hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
              "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE,
              "image_size": 16, "patch_size": 4, "projection_dim": HIDDEN}
    return CLIPConfig(text_config=text, vision_config=vision, projection_dim=HIDDEN,
                      attn_implementation=attn)


def _build_clip_text(seq: int, seed: int, attn: str) -> Built:
    import torch
    from transformers import CLIPTextModelWithProjection

    model = CLIPTextModelWithProjection(_clip_config(attn).text_config).eval()
    names = ["input_ids", "attention_mask"]

    def call(m: Any, **kw: Any) -> tuple[Any, ...]:
        out = m(**kw)
        return out.text_embeds, out.last_hidden_state

    # the pooled token is the first end-of-text token: put one before the padding
    ids = _ids(seed, seq, high=VOCAB - 2)
    ids[0, seq - 3] = VOCAB - 1
    return Built(_Forward.wrap(model, names, call),
                 {"input_ids": ids.to(torch.int64), "attention_mask": _mask(seq)},
                 ["text_embeds", "last_hidden_state"],
                 {**_seq_axes(*names, "last_hidden_state"), "text_embeds": {0: "batch"}},
                 optimizer="clip", hf_model=model)


def _build_clip_vision(seq: int, seed: int, attn: str) -> Built:
    from transformers import CLIPVisionModelWithProjection

    model = CLIPVisionModelWithProjection(_clip_config(attn).vision_config).eval()

    def call(m: Any, **kw: Any) -> tuple[Any, ...]:
        out = m(**kw)
        return out.image_embeds, out.last_hidden_state

    return Built(_Forward.wrap(model, ["pixel_values"], call),
                 {"pixel_values": _normal(seed, 1, 3, 16, 16)},
                 ["image_embeds", "last_hidden_state"],
                 {"pixel_values": {0: "batch"}, "image_embeds": {0: "batch"},
                  "last_hidden_state": {0: "batch"}},
                 optimizer="clip", hf_model=model)


def _build_wav2vec2(seq: int, seed: int, attn: str) -> Built:
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    cfg = Wav2Vec2Config(hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                         num_attention_heads=HEADS, intermediate_size=INTERMEDIATE,
                         conv_dim=(16, 16, 16), conv_stride=(5, 4, 2), conv_kernel=(10, 4, 2),
                         num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4,
                         vocab_size=VOCAB, attn_implementation=attn)
    model = Wav2Vec2Model(cfg).eval()
    return Built(_Forward.wrap(model, ["input_values"],
                               lambda m, **kw: (m(**kw).last_hidden_state,)),
                 {"input_values": _normal(seed, 1, 400)},
                 ["last_hidden_state"],
                 {"input_values": {0: "batch", 1: "samples"},
                  "last_hidden_state": {0: "batch", 1: "frames"}},
                 optimizer="bert", hf_model=model)


def _whisper(attn: str) -> Any:
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    cfg = WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, d_model=HIDDEN,
                        encoder_layers=LAYERS, decoder_layers=LAYERS,
                        encoder_attention_heads=HEADS, decoder_attention_heads=HEADS,
                        encoder_ffn_dim=INTERMEDIATE, decoder_ffn_dim=INTERMEDIATE,
                        max_source_positions=8, max_target_positions=MAX_POSITIONS,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2,
                        decoder_start_token_id=1, suppress_tokens=[], begin_suppress_tokens=[],
                        attn_implementation=attn)
    return WhisperForConditionalGeneration(cfg).eval()


def _build_whisper_encoder(seq: int, seed: int, attn: str) -> Built:
    model = _whisper(attn)
    encoder = model.model.encoder
    return Built(_Forward.wrap(encoder, ["input_features"],
                               lambda m, **kw: (m(**kw).last_hidden_state,)),
                 {"input_features": _normal(seed, 1, 16, 16)},
                 ["last_hidden_state"],
                 {"input_features": {0: "batch"}, "last_hidden_state": {0: "batch"}},
                 optimizer="bart", hf_model=model)


def _build_whisper_decoder(seq: int, seed: int, attn: str) -> Built:
    model = _whisper(attn)
    names = ["input_ids", "attention_mask", "encoder_hidden_states"]

    def call(m: Any, input_ids: Any, attention_mask: Any,
             encoder_hidden_states: Any) -> tuple[Any, ...]:
        hidden = m.model.decoder(input_ids=input_ids, attention_mask=attention_mask,
                                 encoder_hidden_states=encoder_hidden_states,
                                 use_cache=False).last_hidden_state
        return (m.proj_out(hidden),)

    return Built(_Forward.wrap(model, names, call),
                 {"input_ids": _ids(seed, seq), "attention_mask": _mask(seq),
                  "encoder_hidden_states": _normal(seed + 1, 1, 8, HIDDEN)},
                 ["logits"],
                 {"input_ids": {0: "batch", 1: "sequence"},
                  "attention_mask": {0: "batch", 1: "sequence"},
                  "encoder_hidden_states": {0: "batch"},
                  "logits": {0: "batch", 1: "sequence"}},
                 optimizer="bart", hf_model=model)


def _t5(attn: str) -> Any:
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=INTERMEDIATE,
                   num_layers=LAYERS, num_decoder_layers=LAYERS, num_heads=HEADS,
                   relative_attention_num_buckets=8, relative_attention_max_distance=16,
                   decoder_start_token_id=0, attn_implementation=attn)
    return T5ForConditionalGeneration(cfg).eval()


def _build_t5_encoder(seq: int, seed: int, attn: str) -> Built:
    model = _t5(attn)
    names = ["input_ids", "attention_mask"]
    return Built(_Forward.wrap(model.get_encoder(), names,
                               lambda m, **kw: (m(**kw).last_hidden_state,)),
                 {"input_ids": _ids(seed, seq), "attention_mask": _mask(seq)},
                 ["last_hidden_state"], _seq_axes(*names, "last_hidden_state"),
                 optimizer="t5", hf_model=model)


def _build_t5_decoder(seq: int, seed: int, attn: str) -> Built:
    from transformers.modeling_outputs import BaseModelOutput

    model = _t5(attn)
    names = ["decoder_input_ids", "encoder_hidden_states", "encoder_attention_mask"]

    def call(m: Any, decoder_input_ids: Any, encoder_hidden_states: Any,
             encoder_attention_mask: Any) -> tuple[Any, ...]:
        out = m(decoder_input_ids=decoder_input_ids,
                encoder_outputs=BaseModelOutput(last_hidden_state=encoder_hidden_states),
                attention_mask=encoder_attention_mask, use_cache=False)
        return (out.logits,)

    return Built(_Forward.wrap(model, names, call),
                 {"decoder_input_ids": _ids(seed, seq),
                  "encoder_hidden_states": _normal(seed + 1, 1, seq, HIDDEN),
                  "encoder_attention_mask": _mask(seq)},
                 ["logits"],
                 {"decoder_input_ids": {0: "batch", 1: "decoder_sequence"},
                  "encoder_hidden_states": {0: "batch", 1: "encoder_sequence"},
                  "encoder_attention_mask": {0: "batch", 1: "encoder_sequence"},
                  "logits": {0: "batch", 1: "decoder_sequence"}},
                 optimizer="t5", hf_model=model)


def _build_bart(seq: int, seed: int, attn: str) -> Built:
    from transformers import BartConfig, BartModel

    cfg = BartConfig(vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=LAYERS,
                     decoder_layers=LAYERS, encoder_attention_heads=HEADS,
                     decoder_attention_heads=HEADS, encoder_ffn_dim=INTERMEDIATE,
                     decoder_ffn_dim=INTERMEDIATE, max_position_embeddings=MAX_POSITIONS,
                     attn_implementation=attn)
    model = BartModel(cfg).eval()
    names = ["input_ids", "attention_mask", "decoder_input_ids"]

    def call(m: Any, **kw: Any) -> tuple[Any, ...]:
        out = m(**kw, use_cache=False)
        return out.last_hidden_state, out.encoder_last_hidden_state

    return Built(_Forward.wrap(model, names, call),
                 {"input_ids": _ids(seed, seq), "attention_mask": _mask(seq),
                  "decoder_input_ids": _ids(seed + 1, seq)},
                 ["last_hidden_state", "encoder_last_hidden_state"],
                 {"input_ids": {0: "batch", 1: "encoder_sequence"},
                  "attention_mask": {0: "batch", 1: "encoder_sequence"},
                  "decoder_input_ids": {0: "batch", 1: "decoder_sequence"},
                  "last_hidden_state": {0: "batch", 1: "decoder_sequence"},
                  "encoder_last_hidden_state": {0: "batch", 1: "encoder_sequence"}},
                 optimizer="bart", hf_model=model)


def _decoder_config(kind: str, attn: str) -> Any:
    """The config of a decoder-only model `kind`: GPT-2 like the encoders; the others
    LLM_HIDDEN wide with 2 key/value heads (head size 16)."""
    import transformers as tf

    common = {"vocab_size": VOCAB, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
              "attn_implementation": attn, "tie_word_embeddings": False}
    llama_like = {"hidden_size": LLM_HIDDEN, "intermediate_size": 2 * LLM_HIDDEN,
                  "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
                  "num_key_value_heads": 2, "max_position_embeddings": MAX_POSITIONS}
    if kind == "gpt2":
        return tf.GPT2Config(n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                             n_positions=MAX_POSITIONS, **common)
    if kind == "llama":
        return tf.LlamaConfig(**llama_like, **common)
    if kind == "qwen2":
        return tf.Qwen2Config(**llama_like, **common)
    if kind == "gemma":
        return tf.GemmaConfig(**llama_like, head_dim=LLM_HIDDEN // HEADS, **common)
    if kind == "phi3":
        return tf.Phi3Config(**llama_like, original_max_position_embeddings=MAX_POSITIONS,
                             **common)
    raise ValueError(f"no decoder config for {kind!r}")


def _decoder(kind: str, attn: str) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_config(_decoder_config(kind, attn)).eval()


def _kv_shape(model: Any, past: int) -> tuple[int, int, int, int]:
    cfg = model.config
    heads = getattr(cfg, "num_attention_heads", None) or cfg.n_head
    kv = getattr(cfg, "num_key_value_heads", None) or heads
    hidden = getattr(cfg, "hidden_size", None) or cfg.n_embd
    head_dim = getattr(cfg, "head_dim", None) or hidden // heads
    return 1, int(kv), past, int(head_dim)


def _build_decoder(kind: str, seq: int, seed: int, attn: str, past: int = 0,
                   present_out: bool = False) -> Built:
    """A causal LM: input_ids, attention_mask -> logits; with `past` > 0 also past key
    values of `past` positions in and the present ones out; with `present_out` (and no
    past) the present key values out too (the first step of a merged decoder)."""
    from transformers import DynamicCache

    model = _decoder(kind, attn)
    layers = model.config.num_hidden_layers
    kv_names = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    present = [n.replace("past_key_values", "present") for n in kv_names]
    names = ["input_ids", "attention_mask"] + (kv_names if past else [])
    with_present = bool(past) or present_out

    def call(m: Any, input_ids: Any, attention_mask: Any, **kv: Any) -> tuple[Any, ...]:
        if not with_present:
            return (m(input_ids=input_ids, attention_mask=attention_mask,
                      use_cache=False).logits,)
        pairs = [(kv[f"past_key_values.{i}.key"], kv[f"past_key_values.{i}.value"])
                 for i in range(layers)] if kv else None
        cache = DynamicCache(pairs, config=m.config)
        out = m(input_ids=input_ids, attention_mask=attention_mask, cache=cache,
                use_cache=True)
        flat = [t for layer in out.cache.layers for t in (layer.keys, layer.values)]
        return (out.logits, *flat)

    inputs: dict[str, Any] = {"input_ids": _ids(seed, seq)}
    dynamic = {"input_ids": {0: "batch", 1: "sequence"},
               "logits": {0: "batch", 1: "sequence"}}
    if past:
        mask = _mask(past + seq, padded=0)
        mask[0, 0] = 0  # one masked past position
        inputs["attention_mask"] = mask
        for i, n in enumerate(kv_names):
            inputs[n] = _normal(seed + 1 + i, *_kv_shape(model, past))
            dynamic[n] = {0: "batch", 2: "past_sequence"}
        for n in present:
            dynamic[n] = {0: "batch", 2: "total_sequence"}
        dynamic["attention_mask"] = {0: "batch", 1: "total_sequence"}
    else:
        inputs["attention_mask"] = _mask(seq)
        dynamic["attention_mask"] = {0: "batch", 1: "sequence"}
        for n in present:
            dynamic[n] = {0: "batch", 2: "sequence"}
    optimizer = "gpt2" if kind == "gpt2" else None
    return Built(_Forward.wrap(model, names, call), inputs,
                 ["logits"] + (present if with_present else []), dynamic, optimizer=optimizer,
                 hf_model=model, extra={"kind": kind})


BUILDERS: dict[str, Callable[[int, int, str], Built]] = {
    "bert": _build_bert,
    "distilbert": _build_distilbert,
    "roberta": _build_roberta,
    "vit": _build_vit,
    "clip_text": _build_clip_text,
    "clip_vision": _build_clip_vision,
    "wav2vec2": _build_wav2vec2,
    "whisper_encoder": _build_whisper_encoder,
    "whisper_decoder": _build_whisper_decoder,
    "t5_encoder": _build_t5_encoder,
    "t5_decoder": _build_t5_decoder,
    "bart": _build_bart,
}
DECODERS = ("gpt2", "llama", "qwen2", "gemma", "phi3")
MODELS = (*BUILDERS, *DECODERS)

_ENCODER_VARIANTS = ("torchscript", "dynamo", "optimized", "dynamo_optimized", "fp16",
                     "optimized_fp16", "int8", "uint8", "optimized_int8", "int4")
_LLM_VARIANTS = ("torchscript", "dynamo", "with_past", "fp16", "int8", "int4",
                 "genai_fp32", "genai_int4", "genai_int8")
VARIANTS: dict[str, tuple[str, ...]] = {
    **{m: _ENCODER_VARIANTS for m in BUILDERS},
    "gpt2": ("torchscript", "dynamo", "with_past", "merged", "optimized", "fp16",
             "optimized_fp16", "int8", "uint8", "int4"),
    **{m: _LLM_VARIANTS for m in ("llama", "qwen2", "gemma", "phi3")},
}
"""The variants each model can be made as (see the module docstring)."""


# --------------------------------------------------------------------------------- exporters

def _require(module: str) -> None:
    """ModuleNotFoundError (named `module`) when `module` is not installed."""
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporters while the block runs (warnings, transformers' logging and
    progress bars, log records up to WARNING: torch.onnx, onnxruntime.quantization), then
    restore every setting: make() runs inside the zoo's process."""
    import transformers

    verbosity = transformers.logging.get_verbosity()
    bars = transformers.utils.logging.is_progress_bar_enabled()
    disabled = logging.root.manager.disable
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        transformers.logging.set_verbosity(verbosity)
        if bars:
            transformers.utils.logging.enable_progress_bar()
        logging.disable(disabled)


def _export_torchscript(built: Built, path: Path, opset: int | None = None) -> None:
    import torch

    with torch.no_grad():
        torch.onnx.export(built.module, tuple(built.inputs.values()), str(path),
                          input_names=list(built.inputs), output_names=built.outputs,
                          dynamic_axes=built.dynamic, opset_version=opset or OPSET_TORCHSCRIPT,
                          do_constant_folding=True, dynamo=False)


def _export_dynamo(built: Built, path: Path, opset: int | None = None) -> None:
    _require("onnxscript")
    import io

    import torch

    dim = torch.export.Dim.DYNAMIC
    # forward(*tensors): one positional parameter holding every input
    shapes = (tuple({axis: dim for axis in built.dynamic.get(name, {}) if axis != 0}
                    for name in built.inputs),)
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()):
        program = torch.onnx.export(built.module, tuple(built.inputs.values()),
                                    input_names=list(built.inputs),
                                    output_names=built.outputs, dynamic_shapes=shapes,
                                    opset_version=opset or OPSET_DYNAMO, dynamo=True,
                                    external_data=False, verbose=False)
        program.save(str(path), external_data=False)


def _save(model: Any, path: Path) -> None:
    """Save an onnx ModelProto as one file (weights inline)."""
    import onnx

    onnx.save_model(model, str(path), save_as_external_data=False)


def _optimize(src: Path, dst: Path, model_type: str, fp16: bool = False) -> None:
    from onnxruntime.transformers.optimizer import optimize_model

    optimized = optimize_model(str(src), model_type=model_type, num_heads=HEADS,
                               hidden_size=HIDDEN, opt_level=0, use_gpu=False)
    if fp16:  # the Casts of kept float32 inputs come last (the reader sorts the nodes)
        optimized.convert_float_to_float16(keep_io_types=True)
    # save_model_to_file also declares the com.microsoft opset the fused ops need
    optimized.save_model_to_file(str(dst), use_external_data_format=False)


def _fp16(src: Path, dst: Path) -> None:
    import onnx
    from onnxruntime.transformers.onnx_model import OnnxModel

    model = OnnxModel(onnx.load(str(src)))
    # the Casts of kept float32 inputs come last, after their readers: the graph is not in
    # topological order, as onnxruntime's float16 tool writes it (the reader sorts it)
    model.convert_float_to_float16(keep_io_types=True)
    _save(model.model, dst)


def _quantize(src: Path, dst: Path, weight_type: str,
              op_types: Sequence[str] | None = None) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # DefaultTensorType: the type of values ONNX shape inference cannot type (the outputs of
    # com.microsoft ops in optimized models)
    quantize_dynamic(str(src), str(dst), weight_type=getattr(QuantType, weight_type),
                     op_types_to_quantize=list(op_types) if op_types else None,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def _int4(src: Path, dst: Path) -> None:
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quantizer = MatMulNBitsQuantizer(onnx.load(str(src)), bits=4, block_size=INT4_BLOCK,
                                     is_symmetric=True)
    quantizer.process()
    _save(quantizer.model.model, dst)


# ------------------------------------------------------------------------ merged decoder

def _merge_decoders(no_past: Path, with_past: Path, dst: Path) -> None:
    """One model computing `no_past` or `with_past` (same weights, same outputs) by an If on
    a new bool input `use_cache_branch` [1]: Optimum's merged-decoder layout. Initializers
    (deduplicated by content) live in the outer graph; each branch's values get a prefix."""
    import onnx
    from onnx import helper

    models = {"no_past": onnx.load(str(no_past)), "with_past": onnx.load(str(with_past))}
    outer_inits: dict[str, onnx.TensorProto] = {}
    by_digest: dict[tuple[int, tuple[int, ...], str], str] = {}
    branches: dict[str, onnx.GraphProto] = {}
    graph_inputs = {i.name: i for m in models.values() for i in m.graph.input}
    for tag, model in models.items():
        g = model.graph
        rename: dict[str, str] = {}
        for init in g.initializer:
            key = (init.data_type, tuple(init.dims),
                   hashlib.sha256(init.SerializeToString(deterministic=True)
                                  .replace(init.name.encode(), b"")).hexdigest())
            if key not in by_digest:
                name = f"shared_{len(by_digest)}"
                by_digest[key] = name
                copy = onnx.TensorProto()
                copy.CopyFrom(init)
                copy.name = name
                outer_inits[name] = copy
            rename[init.name] = by_digest[key]
        for node in g.node:
            for out in node.output:
                if out:
                    rename[out] = f"{tag}/{out}"

        def mapped(name: str, rename: dict[str, str] = rename) -> str:
            return rename.get(name, name)

        nodes = []
        for node in g.node:
            new = onnx.NodeProto()
            new.CopyFrom(node)
            new.name = f"{tag}/{node.name}"
            new.input[:] = [mapped(n) if n else n for n in node.input]
            new.output[:] = [mapped(n) if n else n for n in node.output]
            nodes.append(new)
        outputs = []
        for out in g.output:
            info = onnx.ValueInfoProto()
            info.CopyFrom(out)
            name = mapped(out.name)
            if name == out.name:  # an output that is a graph input or initializer
                nodes.append(helper.make_node("Identity", [name], [f"{tag}/{out.name}"]))
                name = f"{tag}/{out.name}"
            info.name = name
            outputs.append(info)
        branches[tag] = helper.make_graph(nodes, f"{tag}_branch", [], outputs)
    ref = models["with_past"].graph
    flag = helper.make_tensor_value_info("use_cache_branch", onnx.TensorProto.BOOL, [1])
    if_node = helper.make_node("If", ["use_cache_branch"], [o.name for o in ref.output],
                               name="optimum::if", then_branch=branches["with_past"],
                               else_branch=branches["no_past"])
    inputs = [graph_inputs[i.name] for i in ref.input] + [flag]
    graph = helper.make_graph([if_node], "merged_decoder", inputs, list(ref.output),
                              initializer=list(outer_inits.values()))
    merged = helper.make_model(graph, opset_imports=list(models["with_past"].opset_import),
                               producer_name="make_transformers.py")
    merged.ir_version = models["with_past"].ir_version
    onnx.checker.check_model(merged)
    _save(merged, dst)


# ------------------------------------------------------------------------ genai builder

def _save_tokenizer(folder: Path) -> None:
    """A word-level tokenizer over VOCAB tokens `t<i>` (0 pad, 1 bos, 2 eos), saved with
    `save_pretrained` so `AutoTokenizer.from_pretrained(folder)` loads it offline."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3}
    vocab.update({f"t{i}": i for i in range(4, VOCAB)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>",
                                   eos_token="</s>", unk_token="<unk>")
    fast.save_pretrained(str(folder))


def _export_genai(built: Built, path: Path, precision: str) -> None:
    """Run the onnxruntime-genai model builder (CPU execution provider) on the random model
    saved in a temporary folder and write its decoder as one file."""
    _require("onnxruntime_genai")
    import onnx

    with tempfile.TemporaryDirectory(prefix="make_transformers_genai_") as tmp:
        src, out, cache = Path(tmp, "hf"), Path(tmp, "onnx"), Path(tmp, "cache")
        built.hf_model.save_pretrained(str(src))
        _save_tokenizer(src)
        cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(src),
               "-o", str(out), "-p", precision, "-e", "cpu", "-c", str(cache)]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        run = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if run.returncode != 0:
            tail = "\n".join((run.stdout + run.stderr).splitlines()[-20:])
            raise RuntimeError(f"onnxruntime-genai builder failed ({precision}):\n{tail}")
        _save(onnx.load(str(out / "model.onnx")), path)


# ---------------------------------------------------------------------------------- make

def build(model: str, seq: int = 8, seed: int = 0, past: int = 0, attn: str = "eager",
          present_out: bool = False) -> Built:
    """The random-weight model `model` (one of MODELS), seeded, with its example inputs
    (`past`, `present_out`: decoders only, see `_build_decoder`)."""
    import torch

    torch.manual_seed(seed)
    if model in DECODERS:
        return _build_decoder(model, seq, seed, attn, past=past, present_out=present_out)
    if model not in BUILDERS:
        raise ValueError(f"unknown model {model!r}; one of {', '.join(MODELS)}")
    return BUILDERS[model](seq, seed, attn)


def make(path: Path, model: str = "bert", variant: str = "torchscript", seq: int = 8,
         past: int = 4, seed: int = 0, attn: str = "eager", opset: int | None = None
         ) -> None:
    """Write `model` exported as `variant` (see the module docstring) to `path`.

    `seq`: the sequence length of the example inputs (the exported axes stay dynamic);
    `past`: past key-value positions of `with_past` / `merged`; `attn`: the transformers
    attention implementation ("eager", or "sdpa": torch's scaled_dot_product_attention,
    transformers' default); `opset`: the torch.onnx opset (default 17 for TorchScript, 18
    for dynamo; dynamo at 23 with "sdpa" emits the ONNX Attention, RotaryEmbedding and
    RMSNormalization ops). ModuleNotFoundError when an export dependency is missing,
    ValueError for an unknown model or variant."""
    _require("torch")
    _require("transformers")
    if model not in VARIANTS:
        raise ValueError(f"unknown model {model!r}; one of {', '.join(MODELS)}")
    if variant not in VARIANTS[model]:
        raise ValueError(f"model {model!r} has no variant {variant!r}; one of "
                         f"{', '.join(VARIANTS[model])}")
    if variant.startswith("dynamo"):
        _require("onnxscript")
    if variant.startswith("genai"):
        _require("onnxruntime_genai")
    with _quiet():
        _make(Path(path), model, variant, seq, past, seed, attn, opset)


def _make(path: Path, model: str, variant: str, seq: int, past: int, seed: int,
          attn: str, opset: int | None) -> None:
    """make()'s work, its arguments checked."""
    with tempfile.TemporaryDirectory(prefix="make_transformers_") as tmp:
        base = Path(tmp, "base.onnx")
        with_past = variant in ("with_past",)
        built = build(model, seq, seed, past=past if with_past else 0, attn=attn)
        if variant.startswith("genai"):
            _export_genai(built, path, variant.split("_", 1)[1])
            return
        if variant == "merged":
            _export_torchscript(build(model, seq, seed, attn=attn, present_out=True), base,
                                opset)
            step = build(model, seq, seed, past=past, attn=attn)
            step_file = Path(tmp, "with_past.onnx")
            _export_torchscript(step, step_file, opset)
            _merge_decoders(base, step_file, path)
            return
        if variant.startswith("dynamo"):
            _export_dynamo(built, base, opset)
        else:
            _export_torchscript(built, base, opset)
        if variant in ("torchscript", "dynamo", "with_past"):
            shutil.copyfile(base, path)
        elif variant in ("optimized", "dynamo_optimized", "optimized_fp16"):
            if built.optimizer is None:
                raise ValueError(f"model {model!r} has no onnxruntime optimizer type")
            _optimize(base, path, built.optimizer, fp16=variant.endswith("fp16"))
        elif variant == "optimized_int8":
            assert built.optimizer is not None
            optimized = Path(tmp, "optimized.onnx")
            _optimize(base, optimized, built.optimizer)
            _quantize(optimized, path, "QInt8", op_types=("MatMul", "Attention"))
        elif variant == "fp16":
            _fp16(base, path)
        elif variant in ("int8", "uint8"):
            _quantize(base, path, "QInt8" if variant == "int8" else "QUInt8")
        elif variant == "int4":
            _int4(base, path)
        else:  # pragma: no cover - VARIANTS and this chain agree
            raise ValueError(f"variant {variant!r} is not implemented")


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: `make_transformers.py MODEL VARIANT OUT.onnx [--seq N] [--past N]
    [--seed N] [--attn eager|sdpa] [--opset N]`, or `--list`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", choices=MODELS)
    parser.add_argument("variant", nargs="?")
    parser.add_argument("output", nargs="?", type=Path)
    parser.add_argument("--seq", type=int, default=8)
    parser.add_argument("--past", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--attn", choices=("eager", "sdpa"), default="eager")
    parser.add_argument("--opset", type=int, default=None)
    parser.add_argument("--list", action="store_true", help="print every (model, variant)")
    args = parser.parse_args(argv)
    if args.list:
        print(json.dumps(VARIANTS, indent=1))
        return 0
    if not (args.model and args.variant and args.output):
        parser.error("MODEL, VARIANT and OUTPUT are required (or --list)")
    make(args.output, model=args.model, variant=args.variant, seq=args.seq, past=args.past,
         seed=args.seed, attn=args.attn, opset=args.opset)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
