"""SVDF vs LiteRT (one invocation): ranks 1 and 2, memory 1 and several, with and without
bias, fused activations, a zero (variable) state, hybrid int8 weights, the rank rule; a
non-zero initial state against a numpy oracle."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S, check, rand

NONE, RELU, RELU_N1_TO_1, RELU6, TANH = 0, 1, 2, 3, 4


def svdf(batch: int, n_in: int, units: int, rank: int, memory: int, *, act: int = NONE,
         bias: bool = True, state_value: np.ndarray | None = None, hybrid: bool = False,
         rank_option: int | None = None, variable: bool = True) -> bytes:
    filters = units * rank
    mb = ModelBuilder()
    x = mb.input("x", [batch, n_in])
    wf_v, wt_v = rand(filters, n_in, seed=1), rand(filters, memory, seed=2)
    if hybrid:
        sf, st = np.abs(wf_v).max() / 127, np.abs(wt_v).max() / 127
        wf = mb.const("wf", np.round(wf_v / sf).astype(np.int8), quant=Quant([sf], [0]))
        wt = mb.const("wt", np.round(wt_v / st).astype(np.int8), quant=Quant([st], [0]))
    else:
        wf, wt = mb.const("wf", wf_v), mb.const("wt", wt_v)
    b = mb.const("b", rand(units, seed=3)) if bias else -1
    state_shape = [batch, memory * filters]
    if state_value is None:
        state = mb.tensor("state", state_shape)
    else:
        state = mb.tensor("state", state_shape, data=state_value.astype(np.float32))
    mb.sg.tensors[state].isVariable = variable
    y = mb.output(mb.tensor("y", [batch, units]))
    o = S.SVDFOptionsT()
    o.rank = rank if rank_option is None else rank_option
    o.fusedActivationFunction = act
    mb.op("SVDF", [x, wf, wt, b, state], [y], o)
    return mb.build()


@pytest.mark.parametrize("rank,memory", [(1, 1), (1, 4), (2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_zero_state(rank: int, memory: int, bias: bool) -> None:
    check(svdf(2, 3, 4, rank, memory, bias=bias), [rand(2, 3, seed=4)])


@pytest.mark.parametrize("act", [RELU, RELU_N1_TO_1, RELU6, TANH])
def test_activation(act: int) -> None:
    check(svdf(3, 5, 2, 2, 3, act=act), [rand(3, 5, low=-3, high=3, seed=5)])


def svdf_oracle(x, wf, wt, bias, state, rank):
    """float64 SVDF step written from LiteRT's documented float kernel."""
    batch = x.shape[0]
    filters, memory = wt.shape
    st = state.astype(np.float64).reshape(batch, filters, memory)
    st = np.concatenate([st[:, :, 1:], (x @ wf.T)[:, :, None]], axis=2)
    per_filter = (st * wt[None]).sum(axis=2)
    return per_filter.reshape(batch, filters // rank, rank).sum(axis=2) + bias


@pytest.mark.parametrize("rank,memory", [(1, 4), (2, 3)])
def test_initial_state_numpy_oracle(rank: int, memory: int) -> None:
    """A state with a non-zero value: LiteRT accepts neither a variable tensor with a buffer
    nor a non-variable state, so this case is checked against a float64 numpy oracle."""
    state = rand(2, memory * 4 * rank, seed=6)
    m = svdf(2, 3, 4, rank, memory, state_value=state, variable=False)
    x = rand(2, 3, seed=7)
    result = convert_tflite(m)
    got = result.run({result.input_names[0]: x})[result.output_names[0]]
    want = svdf_oracle(x.astype(np.float64), rand(4 * rank, 3, seed=1).astype(np.float64),
                       rand(4 * rank, memory, seed=2).astype(np.float64),
                       rand(4, seed=3).astype(np.float64), state, rank)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_hybrid_int8_weights() -> None:
    # LiteRT quantizes the input on the fly in the hybrid kernel: looser tolerance
    check(svdf(2, 6, 3, 2, 4, hybrid=True), [rand(2, 6, seed=9)], atol=5e-3)


def test_rank_must_divide_filters() -> None:
    m = svdf(1, 2, 3, 1, 2, rank_option=2)
    with pytest.raises(ConversionFailed, match="rank 2 does not divide the 3 filters"):
        convert_tflite(m)
