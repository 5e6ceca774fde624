"""A micro-wakeword-style streaming TFLite model: a ring buffer of past feature frames kept in
a resource variable (CALL_ONCE init subgraph + VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE),
a convolution over the window and a classifier; and LiteRT's persistent interpreter, which
keeps the variable between `invoke()` calls (the reference for carried state)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S

FRAME = 8
"""Features per frame."""
WINDOW = 4
"""Frames the model sees: the 3 kept in the ring buffer and the new one."""


def streaming_model(initial: float = 0.25) -> bytes:
    """features [1, FRAME] -> window = concat(state [1, WINDOW-1, FRAME], features) ->
    state := window[:, 1:, :] (ASSIGN_VARIABLE) -> conv over time (DEPTHWISE-free: a
    FULLY_CONNECTED on the flattened window) -> RELU -> FULLY_CONNECTED -> LOGISTIC -> prob
    [1, 2]. The init subgraph assigns `initial` everywhere."""
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    ring = _ring_tensors(mb)
    hidden = mb.tensor("hidden", [1, 16])
    logits = mb.tensor("logits", [1, 2])
    prob = mb.output(mb.tensor("prob", [1, 2]))
    _ring_ops(mb, ring, np.full((1, WINDOW - 1, FRAME), initial, np.float32))
    fc = S.FullyConnectedOptionsT()
    fc.fusedActivationFunction = S.ActivationFunctionType.RELU
    w1 = mb.const("w1", rng.normal(0, 0.3, (16, WINDOW * FRAME)).astype(np.float32))
    b1 = mb.const("b1", rng.normal(0, 0.1, (16,)).astype(np.float32))
    mb.op("FULLY_CONNECTED", [ring.flat, w1, b1], [hidden], fc)
    fc2 = S.FullyConnectedOptionsT()
    w2 = mb.const("w2", rng.normal(0, 0.3, (2, 16)).astype(np.float32))
    b2 = mb.const("b2", np.zeros(2, np.float32))
    mb.op("FULLY_CONNECTED", [hidden, w2, b2], [logits], fc2)
    mb.op("LOGISTIC", [logits], [prob])
    return mb.build()


@dataclass(frozen=True)
class _Ring:
    """The main subgraph's tensors of the ring buffer (indices)."""

    feats: int
    handle: int
    state: int
    frame: int
    window: int
    new_state: int
    flat: int
    quant: Quant | None


def _ring_tensors(mb: ModelBuilder, dtype: str = "float32", quant: Quant | None = None) -> _Ring:
    """The input, variable handle and window tensors of the main subgraph, all `dtype`
    with quantization `quant`."""
    return _Ring(
        feats=mb.input("features", [1, FRAME], dtype, quant=quant),
        handle=mb.tensor("stream_handle", [], "resource"),
        state=mb.tensor("stream_state_read", [1, WINDOW - 1, FRAME], dtype, quant=quant),
        frame=mb.tensor("frame", [1, 1, FRAME], dtype, quant=quant),
        window=mb.tensor("window", [1, WINDOW, FRAME], dtype, quant=quant),
        new_state=mb.tensor("new_state", [1, WINDOW - 1, FRAME], dtype, quant=quant),
        flat=mb.tensor("flat", [1, WINDOW * FRAME], dtype, quant=quant),
        quant=quant)


def _ring_ops(mb: ModelBuilder, ring: _Ring, initial_state: np.ndarray) -> None:
    """The init subgraph (VAR_HANDLE + ASSIGN_VARIABLE of `initial_state`, run by
    CALL_ONCE) and the main subgraph's ring buffer: read the state, append the new frame,
    keep the last WINDOW-1 frames, flatten the window into `ring.flat`."""
    init = mb.subgraph("init")
    init_handle = mb.tensor("stream_handle", [], "resource")
    start = mb.const("initial_state", initial_state, quant=ring.quant)
    var = S.VarHandleOptionsT()
    var.sharedName = "stream/ring_buffer"
    mb.op("VAR_HANDLE", [], [init_handle], var)
    mb.op("ASSIGN_VARIABLE", [init_handle, start], [])
    mb.use(0)

    once = S.CallOnceOptionsT()
    once.initSubgraphIndex = init
    mb.op("CALL_ONCE", [], [], once)
    mb.op("VAR_HANDLE", [], [ring.handle], var)
    mb.op("READ_VARIABLE", [ring.handle], [ring.state])
    reshape = S.ReshapeOptionsT()
    reshape.newShape = [1, 1, FRAME]
    mb.op("RESHAPE", [ring.feats, mb.const("frame_shape", np.array([1, 1, FRAME], np.int32))],
          [ring.frame], reshape)
    concat = S.ConcatenationOptionsT()
    concat.axis = 1
    mb.op("CONCATENATION", [ring.state, ring.frame], [ring.window], concat)
    mb.op("SLICE", [ring.window, mb.const("begin", np.array([0, 1, 0], np.int32)),
                    mb.const("size", np.array([1, WINDOW - 1, FRAME], np.int32))],
          [ring.new_state], S.SliceOptionsT())
    mb.op("ASSIGN_VARIABLE", [ring.handle, ring.new_state], [])
    flat_shape = S.ReshapeOptionsT()
    flat_shape.newShape = [1, WINDOW * FRAME]
    mb.op("RESHAPE", [ring.window,
                      mb.const("flat_shape", np.array([1, WINDOW * FRAME], np.int32))],
          [ring.flat], flat_shape)


def frames(count: int, seed: int = 0) -> list[np.ndarray]:
    """`count` random feature frames [1, FRAME]."""
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 1, (1, FRAME)).astype(np.float32) for _ in range(count)]


def litert_sequence(model: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The model's output for each input in turn, in ONE LiteRT interpreter (its resource
    variables persist between `invoke()` calls)."""
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    (inp,) = interp.get_input_details()
    (out,) = interp.get_output_details()
    results = []
    for x in inputs:
        interp.set_tensor(inp["index"], x)
        interp.invoke()
        results.append(np.array(interp.get_tensor(out["index"])))
    return results


def quantized_streaming_model() -> bytes:
    """The int8 form micro-wakeword ships: features, ring buffer and window int8 (scale 0.05,
    zero point -3), the classifier a FULLY_CONNECTED with int8 weights (per-tensor), int32
    bias and an int8 output (scale 0.1, zero point 2). The init subgraph assigns int8 10
    (0.65) everywhere."""
    rng = np.random.default_rng(1)
    mb = ModelBuilder()
    ring = _ring_tensors(mb, "int8", Quant([0.05], [-3]))
    out_q = Quant([0.1], [2])
    score = mb.output(mb.tensor("score", [1, 2], "int8", quant=out_q))
    _ring_ops(mb, ring, np.full((1, WINDOW - 1, FRAME), 10, np.int8))
    w_scale = 0.01
    w = mb.const("w", rng.integers(-60, 61, (2, WINDOW * FRAME)).astype(np.int8),
                 quant=Quant([w_scale], [0]))
    b = mb.const("b", rng.integers(-200, 201, (2,)).astype(np.int32),
                 quant=Quant([0.05 * w_scale], [0]))
    mb.op("FULLY_CONNECTED", [ring.flat, w, b], [score], S.FullyConnectedOptionsT())
    return mb.build()


def int8_frames(count: int, seed: int = 0) -> list[np.ndarray]:
    """`count` random int8 feature frames [1, FRAME]."""
    rng = np.random.default_rng(seed)
    return [rng.integers(-100, 101, (1, FRAME)).astype(np.int8) for _ in range(count)]
