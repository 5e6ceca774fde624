"""op_mappings/_common: the recurrent gate layouts agree with WebNN's (and with both source
formats' packings), and the unroller walks time both ways and hands outputs back in time
order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.core.webnn import decompose as dc
from op_mappings._common.recurrent_layout import (
    GRU_ZRH,
    LSTM_IFCO,
    LSTM_IOFC,
    PEEPHOLES,
    GateLayout,
    cell_activation,
    stack_directions,
    webnn_direction,
)
from op_mappings._common.unroll import (
    flatten_steps,
    input_projection,
    stack_steps,
    step_blocks,
    swap_batch_time,
    time_order,
    unroll,
)


def _b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


def _run(b: MLGraphBuilder, outputs: dict[str, Any], feeds: dict[str, np.ndarray]
         ) -> dict[str, np.ndarray]:
    graph = b.build(outputs)
    return graph.context.compute(graph, feeds)


def test_layouts_are_webnn_layouts() -> None:
    assert LSTM_IOFC.gates == ("i", "o", "f", "c") and LSTM_IOFC.webnn == "iofg"
    assert LSTM_IFCO.gates == ("i", "f", "c", "o") and LSTM_IFCO.webnn == "ifgo"
    assert GRU_ZRH.gates == ("z", "r", "h") and GRU_ZRH.webnn == "zrn"
    assert PEEPHOLES.gates == ("i", "o", "f")
    for layout, offsets in ((LSTM_IOFC, dc.LSTM_OFFSETS), (LSTM_IFCO, dc.LSTM_OFFSETS),
                            (GRU_ZRH, dc.GRU_OFFSETS)):
        webnn_names = {"c": "g", "h": "n"}
        for g in layout.gates:
            assert layout.index(g) == offsets[layout.webnn][webnn_names.get(g, g)]


def test_layout_slices_pack_and_cifg() -> None:
    h = 3
    assert LSTM_IOFC.cols("f", h) == slice(6, 9)
    assert GRU_ZRH.span(("z", "r"), h) == slice(0, 6)
    with pytest.raises(ValueError, match="consecutive"):
        GRU_ZRH.span(("z", "h"), h)
    cifg = LSTM_IFCO.without("i")
    assert cifg.gates == ("f", "c", "o") and cifg.webnn == ""
    parts = {g: np.full((h, 2), k, np.float32) for k, g in enumerate("ifco")}
    packed = LSTM_IFCO.pack(parts)
    assert packed.shape == (4 * h, 2)
    for g in LSTM_IFCO.gates:
        np.testing.assert_array_equal(packed[LSTM_IFCO.cols(g, h)], parts[g])
    assert stack_directions([packed, packed]).shape == (2, 4 * h, 2)
    assert webnn_direction(2) == "both"
    assert webnn_direction(1) == "forward"
    assert webnn_direction(1, reverse=True) == "backward"


def test_layout_split_by_name() -> None:
    b = _b()
    x = b.input("x", shape=[2, 8], data_type="float32")
    parts = LSTM_IOFC.split(b, x, axis=1)
    assert list(parts) == ["i", "o", "f", "c"]
    value = np.arange(16, dtype=np.float32).reshape(2, 8)
    out = _run(b, parts, {"x": value})
    for g in LSTM_IOFC.gates:
        np.testing.assert_array_equal(out[g], value[:, LSTM_IOFC.cols(g, 2)])


@pytest.mark.parametrize(("name", "alpha", "beta", "expected"), [
    ("tanh", 0.0, 0.0, np.tanh), ("relu", 0.0, 0.0, lambda v: np.maximum(v, 0)),
    ("affine", 0.5, 0.25, lambda v: 0.5 * v + 0.25),
    ("relu6", 0.0, 0.0, lambda v: np.clip(v, 0, 6)),
    ("relu_n1_to_1", 0.0, 0.0, lambda v: np.clip(v, -1, 1)),
    ("identity", 0.0, 0.0, lambda v: v)])
def test_cell_activations(name: str, alpha: float, beta: float, expected: Any) -> None:
    b = _b()
    x = b.input("x", shape=[5], data_type="float32")
    y = cell_activation(name, alpha, beta)(b, x)
    if y is x:
        y = b.identity(x)
    value = np.array([-8, -0.5, 0, 0.5, 8], np.float32)
    out = _run(b, {"y": y}, {"x": value})["y"]
    np.testing.assert_allclose(out, expected(value), rtol=1e-6, atol=1e-7)
    with pytest.raises(KeyError):
        cell_activation("nope")


@pytest.mark.parametrize("reverse", [False, True])
def test_unroll_walks_time_and_returns_time_order(reverse: bool) -> None:
    visited: list[int] = []

    def step(t: int, state: int) -> tuple[int, str]:
        visited.append(t)
        return state + 1, f"out{t}@{state}"

    outs, final = unroll(4, reverse, step, 0)
    assert visited == list(time_order(4, reverse))
    assert visited == ([3, 2, 1, 0] if reverse else [0, 1, 2, 3])
    assert final == 4
    assert [o.split("@")[0] for o in outs] == ["out0", "out1", "out2", "out3"]
    # the state seen at step t: how many steps ran before it
    assert [int(o.split("@")[1]) for o in outs] == ([3, 2, 1, 0] if reverse else [0, 1, 2, 3])


def test_projection_blocks_and_stack_round_trip() -> None:
    steps, batch, size, units = 3, 2, 4, 5
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(batch, steps, size)).astype(np.float32)
    wv = rng.normal(size=(units, size)).astype(np.float32)
    b = _b()
    x = swap_batch_time(b, b.input("x", shape=[batch, steps, size], data_type="float32"))
    proj = input_projection(b, flatten_steps(b, x), b.constant(wv), None)
    blocks = step_blocks(b, proj, steps)
    assert [list(o.shape) for o in blocks] == [[batch, units]] * steps
    seq = swap_batch_time(b, stack_steps(b, blocks, [batch, units]))
    out = _run(b, {"y": seq}, {"x": xv})["y"]
    np.testing.assert_allclose(out, xv @ wv.T, rtol=1e-5, atol=1e-5)
    assert step_blocks(b, proj, 1) == [proj]


def test_gate_layout_is_a_plain_record() -> None:
    custom = GateLayout(("a", "b"))
    assert custom.cols("b", 4) == slice(4, 8) and custom.webnn == ""
