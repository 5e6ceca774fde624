"""Write a small fully int8-quantized TFLite CNN with the flatbuffer object API
(ai_edge_litert.schema_py_generated + flatbuffers; self-contained), seeded random weights.

Graph (NHWC; every activation int8 with per-tensor scale / zero point, calibrated on seeded
random inputs in the input's range):

    x int8 [1, 8, 8, 3] (scale 1/128, zero point -1)
    c1 = CONV_2D 3x3 SAME, 8 filters, RELU              (per-channel int8 weights, int32 bias)
    dw = DEPTHWISE_CONV_2D 3x3 SAME stride 2            (per-channel int8 weights, int32 bias)
    pw = CONV_2D 1x1 VALID stride 2 on c1               (per-channel)
    a  = ADD(dw, pw), RELU
    p  = AVERAGE_POOL_2D 2x2 stride 2                   (same quantization as a)
    f  = FULLY_CONNECTED(p -> 10)                       (per-tensor int8 weights, int32 bias)
    probs = SOFTMAX(f), scores = LOGISTIC(f)            (int8, scale 1/256, zero point -128)

Restrictions: batch 1, static shapes; the weights are normal(0, 0.5) (FULLY_CONNECTED 0.08,
so the logits stay within a few units) quantized symmetrically
(zero point 0), biases int32 with scale = input scale * weight scale, as TFLite requires.

Usage: python -m converter.zoo.models.make_int8_tflite OUT.tflite [--seed N]; the zoo
(`source = "generated:make_int8_tflite.py"`, `format = "tflite"`) calls `make(path, seed=)`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

IN_SCALE, IN_ZP = 1.0 / 128.0, -1
OUT_SCALE, OUT_ZP = 1.0 / 256.0, -128


class _Builder:
    """One subgraph: tensors, constant buffers, operators."""

    def __init__(self) -> None:
        self.model = S.ModelT()
        self.model.version = 3
        self.model.description = "webnn-converter/make_int8_tflite"
        self.model.buffers = [S.BufferT()]
        self.model.operatorCodes = []
        sg = S.SubGraphT()
        sg.tensors, sg.operators, sg.inputs, sg.outputs, sg.name = [], [], [], [], "main"
        self.model.subgraphs = [sg]
        self.sg = sg

    def tensor(self, name: str, shape: Sequence[int], ttype: int,
               scale: Sequence[float] | np.ndarray,
               zero_point: Sequence[int], axis: int = 0, data: np.ndarray | None = None
               ) -> int:
        t = S.TensorT()
        t.name, t.shape, t.type, t.buffer = name, list(shape), ttype, 0
        if data is not None:
            buf = S.BufferT()
            buf.data = list(np.ascontiguousarray(data).tobytes())
            self.model.buffers.append(buf)
            t.buffer = len(self.model.buffers) - 1
        q = S.QuantizationParametersT()
        q.scale = [float(s) for s in scale]
        q.zeroPoint = [int(z) for z in zero_point]
        q.quantizedDimension = axis
        t.quantization = q
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def act(self, name: str, shape: Sequence[int], scale: float, zp: int) -> int:
        return self.tensor(name, shape, S.TensorType.INT8, [scale], [zp])

    def op(self, code: int, version: int, inputs: Sequence[int], outputs: Sequence[int],
           options_type: int, options: object) -> None:
        index = next((i for i, oc in enumerate(self.model.operatorCodes)
                      if oc.builtinCode == code), None)
        if index is None:
            oc = S.OperatorCodeT()
            oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = code, min(code, 127), version
            self.model.operatorCodes.append(oc)
            index = len(self.model.operatorCodes) - 1
        o = S.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = index, list(inputs), list(outputs)
        o.builtinOptionsType, o.builtinOptions = options_type, options
        self.sg.operators.append(o)

    def build(self) -> bytes:
        b = flatbuffers.Builder(4096)
        b.Finish(self.model.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, same: bool,
          depthwise: bool = False) -> np.ndarray:
    """Float NHWC convolution (w OHWI, or 1HWC for depthwise) for calibration."""
    kh, kw = w.shape[1:3]
    if same:
        h, wd = x.shape[1:3]
        oh, ow = -(-h // stride), -(-wd // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - wd, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    oh = (x.shape[1] - kh) // stride + 1
    ow = (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[0] if not depthwise else w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i:i + stride * oh:stride, j:j + stride * ow:stride, :]
            out += patch * w[0, i, j] if depthwise else patch @ w[:, i, j, :].T
    result: np.ndarray = out + b
    return result


def _range_quant(values: np.ndarray, margin: float = 1.1) -> tuple[float, int]:
    """Asymmetric int8 (scale, zero point) covering the values (and 0), with a margin."""
    lo, hi = min(float(values.min()) * margin, 0.0), max(float(values.max()) * margin, 0.0)
    scale = max(hi - lo, 1e-6) / 255.0
    zp = int(np.clip(round(-128 - lo / scale), -128, 127))
    return scale, zp


def make_int8_cnn(seed: int = 0) -> bytes:
    """The model's bytes (see the module docstring)."""
    rng = np.random.default_rng(seed)
    mb = _Builder()
    calib = (rng.integers(-128, 128, (32, 8, 8, 3)) - IN_ZP) * IN_SCALE

    def per_channel(name: str, w: np.ndarray, axis: int) -> tuple[int, np.ndarray, np.ndarray]:
        peak = np.max(np.abs(np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)), axis=1)
        scale = np.maximum(peak, 1e-6) / 127.0
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
        idx = mb.tensor(name, w.shape, S.TensorType.INT8, scale, [0] * len(scale), axis, q)
        return idx, q.astype(np.float64) * scale.reshape(shape), scale

    def bias(name: str, b: np.ndarray, scale: np.ndarray) -> tuple[int, np.ndarray]:
        q = np.round(b / scale).astype(np.int32)
        idx = mb.tensor(name, b.shape, S.TensorType.INT32, scale, [0] * len(scale), 0, q)
        return idx, q * scale

    def conv_options(stride: int, same: bool, act: int, depthwise: bool = False) -> object:
        o = S.DepthwiseConv2DOptionsT() if depthwise else S.Conv2DOptionsT()
        o.padding = S.Padding.SAME if same else S.Padding.VALID
        o.strideW = o.strideH = stride
        o.dilationWFactor = o.dilationHFactor = 1
        o.fusedActivationFunction = act
        if depthwise:
            o.depthMultiplier = 1
        return o

    x = mb.tensor("x", [1, 8, 8, 3], S.TensorType.INT8, [IN_SCALE], [IN_ZP])
    mb.sg.inputs.append(x)
    relu, none = S.ActivationFunctionType.RELU, S.ActivationFunctionType.NONE

    def conv(name: str, inp: int, finp: np.ndarray, s_in: float, w: np.ndarray, stride: int,
             same: bool, act: int, depthwise: bool = False) -> tuple[int, np.ndarray, float]:
        wi, wf, ws = per_channel(f"{name}.w", w, 3 if depthwise else 0)
        bi, bf = bias(f"{name}.b", rng.normal(0.0, 0.1, len(ws)), s_in * ws)
        fout = _conv(finp, wf, bf, stride, same, depthwise)
        if act == relu:
            fout = np.maximum(fout, 0.0)
        scale, zp = _range_quant(fout)
        out = mb.act(name, [1, *fout.shape[1:]], scale, zp)
        code = S.BuiltinOperator.DEPTHWISE_CONV_2D if depthwise else S.BuiltinOperator.CONV_2D
        otype = (S.BuiltinOptions.DepthwiseConv2DOptions if depthwise
                 else S.BuiltinOptions.Conv2DOptions)
        mb.op(code, 3, [inp, wi, bi], [out], otype, conv_options(stride, same, act, depthwise))
        return out, fout, scale

    c1, f1, s1 = conv("c1", x, calib, IN_SCALE, rng.normal(0.0, 0.5, (8, 3, 3, 3)), 1, True,
                      relu)
    dw, fdw, _ = conv("dw", c1, f1, s1, rng.normal(0.0, 0.5, (1, 3, 3, 8)), 2, True, none,
                      depthwise=True)
    pw, fpw, _ = conv("pw", c1, f1, s1, rng.normal(0.0, 0.5, (8, 1, 1, 8)), 2, False, none)
    fa = np.maximum(fdw + fpw, 0.0)
    sa, za = _range_quant(fa)
    a = mb.act("add", [1, 4, 4, 8], sa, za)
    add_opts = S.AddOptionsT()
    add_opts.fusedActivationFunction = relu
    mb.op(S.BuiltinOperator.ADD, 2, [dw, pw], [a], S.BuiltinOptions.AddOptions, add_opts)
    p = mb.act("pool", [1, 2, 2, 8], sa, za)
    pool_opts = S.Pool2DOptionsT()
    pool_opts.padding = S.Padding.VALID
    pool_opts.strideW = pool_opts.strideH = pool_opts.filterWidth = pool_opts.filterHeight = 2
    pool_opts.fusedActivationFunction = none
    mb.op(S.BuiltinOperator.AVERAGE_POOL_2D, 2, [a], [p], S.BuiltinOptions.Pool2DOptions,
          pool_opts)
    fp = fa.reshape(-1, 2, 2, 2, 2, 8).mean(axis=(2, 4)).reshape(fa.shape[0], -1)
    wfc = rng.normal(0.0, 0.08, (10, 32))
    ws = max(float(np.abs(wfc).max()), 1e-6) / 127.0
    wq = np.clip(np.round(wfc / ws), -127, 127).astype(np.int8)
    wi = mb.tensor("fc.w", [10, 32], S.TensorType.INT8, [ws], [0], 0, wq)
    bi, bfc = bias("fc.b", rng.normal(0.0, 0.1, 10), np.full(10, sa * ws))
    ff = fp @ (wq.astype(np.float64) * ws).T + bfc
    sf, zf = _range_quant(ff)
    f = mb.act("logits", [1, 10], sf, zf)
    fc_opts = S.FullyConnectedOptionsT()
    fc_opts.fusedActivationFunction = none
    fc_opts.weightsFormat = S.FullyConnectedOptionsWeightsFormat.DEFAULT
    fc_opts.keepNumDims = False
    mb.op(S.BuiltinOperator.FULLY_CONNECTED, 4, [p, wi, bi], [f],
          S.BuiltinOptions.FullyConnectedOptions, fc_opts)
    probs = mb.act("probs", [1, 10], OUT_SCALE, OUT_ZP)
    sm_opts = S.SoftmaxOptionsT()
    sm_opts.beta = 1.0
    mb.op(S.BuiltinOperator.SOFTMAX, 2, [f], [probs], S.BuiltinOptions.SoftmaxOptions, sm_opts)
    scores = mb.act("scores", [1, 10], OUT_SCALE, OUT_ZP)
    mb.op(S.BuiltinOperator.LOGISTIC, 2, [f], [scores], S.BuiltinOptions.NONE, None)
    mb.sg.outputs += [probs, scores]
    return mb.build()


def make(path: Path, seed: int = 0) -> None:
    """Write the model to `path` (the zoo's generator entry point)."""
    path.write_bytes(make_int8_cnn(seed))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    make(args.out, args.seed)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
