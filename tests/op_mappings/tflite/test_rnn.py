"""RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN vs LiteRT."""

from __future__ import annotations

import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, rand

NONE, RELU, TANH, SIGN_BIT = 0, 1, 4, 5


def state(mb: ModelBuilder, name: str, shape: list[int]) -> int:
    idx = mb.tensor(name, shape)
    mb.sg.tensors[idx].isVariable = True
    return idx


def cell(mb: ModelBuilder, n_in: int, units: int, batch: int, prefix: str = "",
         seed: int = 0) -> list[int]:
    return [mb.const(prefix + "w", rand(units, n_in, seed=seed + 1)),
            mb.const(prefix + "r", rand(units, units, seed=seed + 2, low=-0.4, high=0.4)),
            mb.const(prefix + "b", rand(units, seed=seed + 3)),
            state(mb, prefix + "h", [batch, units])]


@pytest.mark.parametrize("act", [TANH, RELU, NONE])
@pytest.mark.parametrize("time_major", [False, True])
def test_unidirectional(act: int, time_major: bool) -> None:
    batch, steps, n_in, units = 2, 4, 3, 5
    mb = ModelBuilder()
    shape = [steps, batch] if time_major else [batch, steps]
    x = mb.input("x", [*shape, n_in])
    y = mb.output(mb.tensor("y", [*shape, units]))
    o = S.SequenceRNNOptionsT()
    o.timeMajor, o.fusedActivationFunction = time_major, act
    mb.op("UNIDIRECTIONAL_SEQUENCE_RNN", [x, *cell(mb, n_in, units, batch)], [y], o)
    check(mb.build(), [rand(*shape, n_in, seed=7)], atol=2e-5)


def test_rnn_single_step() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [2, 4]))
    o = S.RNNOptionsT()
    o.fusedActivationFunction = TANH
    mb.op("RNN", [x, *cell(mb, 3, 4, 2)], [y], o)
    check(mb.build(), [rand(2, 3, seed=1)], atol=2e-5)


@pytest.mark.parametrize("merge", [False, True])
def test_bidirectional(merge: bool) -> None:
    batch, steps, n_in, units = 2, 3, 3, 4
    mb = ModelBuilder()
    x = mb.input("x", [batch, steps, n_in])
    ins = [x, *cell(mb, n_in, units, batch, "fw_"), *cell(mb, n_in, units, batch, "bw_", 10),
           -1, -1, -1]
    if merge:
        outs = [mb.output(mb.tensor("y", [batch, steps, 2 * units]))]
    else:
        outs = [mb.output(mb.tensor("fw", [batch, steps, units])),
                mb.output(mb.tensor("bw", [batch, steps, units]))]
    o = S.BidirectionalSequenceRNNOptionsT()
    o.fusedActivationFunction, o.mergeOutputs = TANH, merge
    mb.op("BIDIRECTIONAL_SEQUENCE_RNN", ins, outs, o)
    check(mb.build(), [rand(batch, steps, n_in, seed=3)], atol=2e-5)


def test_sign_bit_rejected() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [2, 4]))
    o = S.RNNOptionsT()
    o.fusedActivationFunction = SIGN_BIT
    mb.op("RNN", [x, *cell(mb, 3, 4, 2)], [y], o)
    with pytest.raises(ConversionFailed, match="recurrent activation 5"):
        convert_tflite(mb.build())
