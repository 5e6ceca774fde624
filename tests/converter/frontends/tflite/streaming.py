"""A micro-wakeword-style streaming TFLite model: a ring buffer of past feature frames kept in
a resource variable (CALL_ONCE init subgraph + VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE),
a convolution over the window and a classifier; and LiteRT's persistent interpreter, which
keeps the variable between `invoke()` calls (the reference for carried state)."""

from __future__ import annotations

from collections.abc import Sequence

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
    feats = mb.input("features", [1, FRAME])
    handle = mb.tensor("stream_handle", [], "resource")
    state = mb.tensor("stream_state_read", [1, WINDOW - 1, FRAME])
    frame = mb.tensor("frame", [1, 1, FRAME])
    window = mb.tensor("window", [1, WINDOW, FRAME])
    new_state = mb.tensor("new_state", [1, WINDOW - 1, FRAME])
    flat = mb.tensor("flat", [1, WINDOW * FRAME])
    hidden = mb.tensor("hidden", [1, 16])
    logits = mb.tensor("logits", [1, 2])
    prob = mb.output(mb.tensor("prob", [1, 2]))

    init = mb.subgraph("init")
    init_handle = mb.tensor("stream_handle", [], "resource")
    start = mb.const("initial_state",
                     np.full((1, WINDOW - 1, FRAME), initial, np.float32))
    var = S.VarHandleOptionsT()
    var.sharedName = "stream/ring_buffer"
    mb.op("VAR_HANDLE", [], [init_handle], var)
    mb.op("ASSIGN_VARIABLE", [init_handle, start], [])
    mb.use(0)

    once = S.CallOnceOptionsT()
    once.initSubgraphIndex = init
    mb.op("CALL_ONCE", [], [], once)
    mb.op("VAR_HANDLE", [], [handle], var)
    mb.op("READ_VARIABLE", [handle], [state])
    reshape = S.ReshapeOptionsT()
    reshape.newShape = [1, 1, FRAME]
    mb.op("RESHAPE", [feats, mb.const("frame_shape", np.array([1, 1, FRAME], np.int32))],
          [frame], reshape)
    concat = S.ConcatenationOptionsT()
    concat.axis = 1
    mb.op("CONCATENATION", [state, frame], [window], concat)
    mb.op("SLICE", [window, mb.const("begin", np.array([0, 1, 0], np.int32)),
                    mb.const("size", np.array([1, WINDOW - 1, FRAME], np.int32))],
          [new_state], S.SliceOptionsT())
    mb.op("ASSIGN_VARIABLE", [handle, new_state], [])
    flat_shape = S.ReshapeOptionsT()
    flat_shape.newShape = [1, WINDOW * FRAME]
    mb.op("RESHAPE", [window, mb.const("flat_shape", np.array([1, WINDOW * FRAME], np.int32))],
          [flat], flat_shape)
    fc = S.FullyConnectedOptionsT()
    fc.fusedActivationFunction = S.ActivationFunctionType.RELU
    w1 = mb.const("w1", rng.normal(0, 0.3, (16, WINDOW * FRAME)).astype(np.float32))
    b1 = mb.const("b1", rng.normal(0, 0.1, (16,)).astype(np.float32))
    mb.op("FULLY_CONNECTED", [flat, w1, b1], [hidden], fc)
    fc2 = S.FullyConnectedOptionsT()
    w2 = mb.const("w2", rng.normal(0, 0.3, (2, 16)).astype(np.float32))
    b2 = mb.const("b2", np.zeros(2, np.float32))
    mb.op("FULLY_CONNECTED", [hidden, w2, b2], [logits], fc2)
    mb.op("LOGISTIC", [logits], [prob])
    return mb.build()


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
    act = Quant([0.05], [-3])
    mb = ModelBuilder()
    feats = mb.input("features", [1, FRAME], "int8", quant=act)
    handle = mb.tensor("stream_handle", [], "resource")
    state = mb.tensor("stream_state_read", [1, WINDOW - 1, FRAME], "int8", quant=act)
    frame = mb.tensor("frame", [1, 1, FRAME], "int8", quant=act)
    window = mb.tensor("window", [1, WINDOW, FRAME], "int8", quant=act)
    new_state = mb.tensor("new_state", [1, WINDOW - 1, FRAME], "int8", quant=act)
    flat = mb.tensor("flat", [1, WINDOW * FRAME], "int8", quant=act)
    out_q = Quant([0.1], [2])
    score = mb.output(mb.tensor("score", [1, 2], "int8", quant=out_q))

    init = mb.subgraph("init")
    init_handle = mb.tensor("stream_handle", [], "resource")
    start = mb.const("initial_state", np.full((1, WINDOW - 1, FRAME), 10, np.int8), quant=act)
    var = S.VarHandleOptionsT()
    var.sharedName = "stream/ring_buffer"
    mb.op("VAR_HANDLE", [], [init_handle], var)
    mb.op("ASSIGN_VARIABLE", [init_handle, start], [])
    mb.use(0)

    once = S.CallOnceOptionsT()
    once.initSubgraphIndex = init
    mb.op("CALL_ONCE", [], [], once)
    mb.op("VAR_HANDLE", [], [handle], var)
    mb.op("READ_VARIABLE", [handle], [state])
    reshape = S.ReshapeOptionsT()
    reshape.newShape = [1, 1, FRAME]
    mb.op("RESHAPE", [feats, mb.const("frame_shape", np.array([1, 1, FRAME], np.int32))],
          [frame], reshape)
    concat = S.ConcatenationOptionsT()
    concat.axis = 1
    mb.op("CONCATENATION", [state, frame], [window], concat)
    mb.op("SLICE", [window, mb.const("begin", np.array([0, 1, 0], np.int32)),
                    mb.const("size", np.array([1, WINDOW - 1, FRAME], np.int32))],
          [new_state], S.SliceOptionsT())
    mb.op("ASSIGN_VARIABLE", [handle, new_state], [])
    flat_shape = S.ReshapeOptionsT()
    flat_shape.newShape = [1, WINDOW * FRAME]
    mb.op("RESHAPE", [window, mb.const("flat_shape", np.array([1, WINDOW * FRAME], np.int32))],
          [flat], flat_shape)
    w_scale = 0.01
    w = mb.const("w", rng.integers(-60, 61, (2, WINDOW * FRAME)).astype(np.int8),
                 quant=Quant([w_scale], [0]))
    b = mb.const("b", rng.integers(-200, 201, (2,)).astype(np.int32),
                 quant=Quant([0.05 * w_scale], [0]))
    mb.op("FULLY_CONNECTED", [flat, w, b], [score], S.FullyConnectedOptionsT())
    return mb.build()


def int8_frames(count: int, seed: int = 0) -> list[np.ndarray]:
    """`count` random int8 feature frames [1, FRAME]."""
    rng = np.random.default_rng(seed)
    return [rng.integers(-100, 101, (1, FRAME)).astype(np.int8) for _ in range(count)]
