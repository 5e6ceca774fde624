"""UNIDIRECTIONAL_SEQUENCE_LSTM, LSTM and BIDIRECTIONAL_SEQUENCE_LSTM vs LiteRT: native WebNN
lstm where exact, unrolled for peephole / CIFG / clipping / projection / layer norm."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, rand

TANH, RELU, RELU6, NONE = 4, 1, 3, 0


def cell_tensors(mb: ModelBuilder, n_in: int, n_cell: int, n_out: int, *, cifg: bool = False,
                 peephole: bool = False, proj: bool = False, seed: int = 0,
                 prefix: str = "") -> list[int]:
    """The 17 weight inputs of one direction (omitted ones are -1)."""
    def w(name: str, *shape: int, scale: float = 0.5) -> int:
        nonlocal seed
        seed += 1
        return mb.const(prefix + name, rand(*shape, seed=seed, low=-scale, high=scale))

    ins = [-1 if cifg else w("wi", n_cell, n_in)]
    ins += [w(f"w{g}", n_cell, n_in) for g in "fco"]
    ins += [-1 if cifg else w("ri", n_cell, n_out)]
    ins += [w(f"r{g}", n_cell, n_out) for g in "fco"]
    ins += [(-1 if (cifg and g == "i") or not peephole else w(f"p{g}", n_cell))
            for g in "ifo"]
    ins += [-1 if cifg else w("bi", n_cell)]
    ins += [w(f"b{g}", n_cell) for g in "fco"]
    ins += [w("pw", n_out, n_cell), w("pb", n_out)] if proj else [-1, -1]
    return ins


def state(mb: ModelBuilder, name: str, shape: list[int]) -> int:
    idx = mb.tensor(name, shape)
    mb.sg.tensors[idx].isVariable = True
    return idx


def uni_model(batch: int = 2, steps: int = 3, n_in: int = 4, n_cell: int = 5,
              n_out: int | None = None, *, act: int = TANH, cell_clip: float = 0.0,
              proj_clip: float = 0.0, time_major: bool = False, layer_norm: bool = False,
              **cell: Any) -> bytes:
    n_out = n_out or n_cell
    mb = ModelBuilder()
    shape = [steps, batch, n_in] if time_major else [batch, steps, n_in]
    x = mb.input("x", shape)
    ins = [x, *cell_tensors(mb, n_in, n_cell, n_out, **cell)]
    ins += [state(mb, "h", [batch, n_out]), state(mb, "c", [batch, n_cell])]
    if layer_norm:
        ins += [(-1 if cell.get("cifg") and g == "i" else
                 mb.const(f"ln{g}", rand(n_cell, seed=40 + k, low=0.5, high=1.5)))
                for k, g in enumerate("ifco")]
    out = [steps, batch, n_out] if time_major else [batch, steps, n_out]
    y = mb.output(mb.tensor("y", out))
    o = S.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction, o.cellClip, o.projClip, o.timeMajor = (act, cell_clip,
                                                                      proj_clip, time_major)
    mb.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], o, version=3)
    return mb.build()


def _ops(result: Any, op: str) -> list[str]:
    return result.report.to_dict()["ops"][op]["webnn_ops"]


@pytest.mark.parametrize("act", [TANH, RELU])
@pytest.mark.parametrize("time_major", [False, True])
def test_uni_native(act: int, time_major: bool) -> None:
    m = uni_model(act=act, time_major=time_major)
    x = rand(*([3, 2, 4] if time_major else [2, 3, 4]), seed=9)
    result = check(m, [x], atol=2e-5)
    assert "lstm" in _ops(result, "UNIDIRECTIONAL_SEQUENCE_LSTM")


@pytest.mark.parametrize("kw", [
    {"peephole": True},
    {"cifg": True, "peephole": True},
    {"cell_clip": 0.3},
    {"proj": True, "n_out": 3, "proj_clip": 0.2},
    {"layer_norm": True},
    {"layer_norm": True, "cifg": True, "peephole": True, "proj": True, "n_out": 3},
    {"act": RELU6},
], ids=["peephole", "cifg", "cell_clip", "projection", "layer_norm", "everything", "relu6"])
def test_uni_unrolled(kw: dict[str, Any]) -> None:
    result = check(uni_model(**kw), [rand(2, 3, 4, seed=9, low=-2, high=2)], atol=2e-5)
    assert "lstm" not in _ops(result, "UNIDIRECTIONAL_SEQUENCE_LSTM")


def test_uni_activation_none_rejected() -> None:
    with pytest.raises(ConversionFailed, match="recurrent activation 0"):
        convert_tflite(uni_model(act=NONE))


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_single_step(peephole: bool) -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 4])
    ins = [x, *cell_tensors(mb, 4, 5, 5, peephole=peephole)]
    ins += [state(mb, "h", [2, 5]), state(mb, "c", [2, 5])]
    y = mb.output(mb.tensor("y", [2, 5]))
    o = S.LSTMOptionsT()
    o.fusedActivationFunction = TANH
    mb.op("LSTM", ins, [y], o, version=1)
    check(mb.build(), [rand(2, 4, seed=3)], atol=2e-5)


def bidi_model(*, merge: bool, time_major: bool, peephole: bool = False) -> bytes:
    batch, steps, n_in, n = 2, 3, 4, 5
    mb = ModelBuilder()
    shape = [steps, batch, n_in] if time_major else [batch, steps, n_in]
    x = mb.input("x", shape)
    ins = [x, *cell_tensors(mb, n_in, n, n, peephole=peephole, seed=0, prefix="fw_"),
           *cell_tensors(mb, n_in, n, n, peephole=peephole, seed=50, prefix="bw_")]
    ins += [state(mb, "fh", [batch, n]), state(mb, "fc", [batch, n]),
            state(mb, "bh", [batch, n]), state(mb, "bc", [batch, n])]
    ins += [-1] * 9  # aux input and aux weights
    out = [steps, batch] if time_major else [batch, steps]
    if merge:
        outs = [mb.output(mb.tensor("y", [*out, 2 * n]))]
    else:
        outs = [mb.output(mb.tensor("fw", [*out, n])), mb.output(mb.tensor("bw", [*out, n]))]
    o = S.BidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction, o.mergeOutputs, o.timeMajor = TANH, merge, time_major
    mb.op("BIDIRECTIONAL_SEQUENCE_LSTM", ins, outs, o, version=1)
    return mb.build()


@pytest.mark.parametrize("merge,time_major,peephole", [(False, True, False),
                                                      (True, True, False),
                                                      (False, False, True)])
def test_bidirectional(merge: bool, time_major: bool, peephole: bool) -> None:
    """(merge_outputs with batch-major input is left out: LiteRT 2.3's kernel returns
    run-to-run different values there, reading uninitialised memory.)"""
    x = rand(*([3, 2, 4] if time_major else [2, 3, 4]), seed=5)
    result = check(bidi_model(merge=merge, time_major=time_major, peephole=peephole), [x],
                   atol=2e-5)
    assert ("lstm" in _ops(result, "BIDIRECTIONAL_SEQUENCE_LSTM")) == (not peephole)


def test_hybrid_int8_weights() -> None:
    """int8 weights with a float input: dequantized at conversion time (LiteRT quantizes the
    activations on the fly, hence the looser tolerance)."""
    from tests.op_mappings.tflite.tflite_builder import Quant

    batch, steps, n_in, n = 1, 2, 3, 4
    mb = ModelBuilder()
    x = mb.input("x", [batch, steps, n_in])
    ins = [x]
    for k in range(8):
        cols = n_in if k < 4 else n
        wv = rand(n, cols, seed=k + 1, low=-0.5, high=0.5)
        scale = float(np.abs(wv).max() / 127)
        ins.append(mb.const(f"w{k}", np.round(wv / scale).astype(np.int8),
                            quant=Quant([scale], [0])))
    ins += [-1, -1, -1]
    ins += [mb.const(f"b{g}", rand(n, seed=20 + k)) for k, g in enumerate("ifco")]
    ins += [-1, -1, state(mb, "h", [batch, n]), state(mb, "c", [batch, n])]
    y = mb.output(mb.tensor("y", [batch, steps, n]))
    o = S.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = TANH
    mb.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], o, version=2)
    check(mb.build(), [rand(batch, steps, n_in, seed=2)], atol=0.03)
