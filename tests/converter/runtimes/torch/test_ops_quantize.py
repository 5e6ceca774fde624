"""Torch quantizeLinear / dequantizeLinear vs the reference backend (no WPT files):
per-tensor, per-axis and blocked scales, every quantized type, float16, rounding ties,
saturation and NaN."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]

SCALE_SHAPES = [(1, 1, 1), (1, 4, 1), (2, 2, 3), (2, 4, 6)]


@pytest.mark.parametrize("qtype", ["uint8", "int8", "uint32", "int32"])
@pytest.mark.parametrize("ftype", ["float32", "float16"])
@pytest.mark.parametrize("sshape", SCALE_SHAPES)
def test_dequantize_linear(sshape: tuple[int, ...], ftype: str, qtype: str) -> None:
    info = np.iinfo(qtype)
    lo, hi = int(info.min), int(info.max)
    if ftype == "float16" and qtype.endswith("32"):
        lo, hi = max(lo, -30000), min(hi, 30000)  # stay inside float16's range
    x = rand((2, 4, 6), qtype, lo, hi)
    scale = rand(sshape, ftype, 0.01, 0.5)
    zero = rand(sshape, qtype, max(lo, -100), min(hi, 100))

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.dequantize_linear(o["x"], o["s"], o["z"])}

    compare({"x": x, "s": scale, "z": zero}, build, f16_ulp=0, rtol=0, atol=0)


@pytest.mark.parametrize("qtype", ["uint8", "int8", "uint32", "int32"])
@pytest.mark.parametrize("ftype", ["float32", "float16"])
@pytest.mark.parametrize("sshape", SCALE_SHAPES)
def test_quantize_linear(sshape: tuple[int, ...], ftype: str, qtype: str) -> None:
    x = rand((2, 4, 6), ftype, -300, 300)
    x.reshape(-1)[:6] = [0.5, 1.5, 2.5, -0.5, np.nan, np.inf]  # ties, NaN, saturation
    scale = rand(sshape, ftype, 0.5, 2.0)
    scale.reshape(-1)[0] = 1.0
    info = np.iinfo(qtype)
    zero = rand(sshape, qtype, max(int(info.min), -20), min(int(info.max), 20))

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.quantize_linear(o["x"], o["s"], o["z"])}

    compare({"x": x, "s": scale, "z": zero}, build)


@pytest.mark.parametrize("qtype", ["int4", "uint4"])
@pytest.mark.parametrize("ftype", ["float32", "float16"])
@pytest.mark.parametrize("sshape", SCALE_SHAPES)
def test_4bit_constants(sshape: tuple[int, ...], ftype: str, qtype: str) -> None:
    """int4/uint4 constants (int8/uint8 tensors, one value per byte) dequantized, and
    quantizeLinear to 4 bits (saturating to the 4-bit range) read back by dequantizeLinear."""
    lo, hi = (-8, 7) if qtype == "int4" else (0, 15)
    storage = "int8" if qtype == "int4" else "uint8"
    w = rand((2, 4, 6), storage, lo, hi)
    w_zero = rand(sshape, storage, lo, hi)
    x = rand((2, 4, 6), ftype, -20, 20)
    x.reshape(-1)[:4] = [0.5, 1.5, np.nan, -np.inf]
    scale = rand(sshape, ftype, 0.5, 2.0)
    zero = rand(sshape, storage, lo, hi)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        wc = b.dequantize_linear(b.constant(w, qtype), o["s"], b.constant(w_zero, qtype))
        q = b.quantize_linear(o["x"], o["s"], b.constant(zero, qtype))
        back = b.dequantize_linear(q, o["s"], b.constant(zero, qtype))
        return {"w": wc, "back": back}

    compare({"x": x, "s": scale}, build, f16_ulp=0, rtol=0, atol=0)
