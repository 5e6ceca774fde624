"""Write small int8-quantized TFLite models with the flatbuffer object API
(ai_edge_litert.schema_py_generated + flatbuffers; self-contained), seeded random weights.
Two models (`make(path, seed=, model=)`):

"cnn", fully int8 (NHWC; every activation int8 with per-tensor scale / zero point, calibrated
on seeded random inputs in the input's range):

    x int8 [1, 8, 8, 3] (scale 1/128, zero point -1)
    c1 = CONV_2D 3x3 SAME, 8 filters, RELU              (per-channel int8 weights, int32 bias)
    dw = DEPTHWISE_CONV_2D 3x3 SAME stride 2            (per-channel int8 weights, int32 bias)
    pw = CONV_2D 1x1 VALID stride 2 on c1               (per-channel)
    a  = ADD(dw, pw), RELU
    p  = AVERAGE_POOL_2D 2x2 stride 2                   (same quantization as a)
    f  = FULLY_CONNECTED(p -> 10)                       (per-tensor int8 weights, int32 bias)
    probs = SOFTMAX(f), scores = LOGISTIC(f)            (int8, scale 1/256, zero point -128)

"unet", an int8 U-Net with float I/O as LiteRT's converter writes one (QUANTIZE after the
input, DEQUANTIZE before each output):

    x float32 [1, 16, 16, 3] -> QUANTIZE
    enc1 = CONV_2D 3x3 SAME 8, RELU; PAD 1; down1 = DEPTHWISE_CONV_2D 3x3 VALID stride 2
    elu = ELU; pool = AVERAGE_POOL_2D 2x2; mid = CONV_2D 1x1 16; leaky = LEAKY_RELU 0.2
    up1 = TRANSPOSE_CONV 2x2 stride 2 (8); cat1 = CONCATENATION(up1, elu)
    up2 = RESIZE_BILINEAR x2 (half-pixel); cat2 = CONCATENATION(up2, enc1); head = CONV_2D 3x3 4
    seg = SOFTMAX(head), mask = LOGISTIC(head), peak = LOGISTIC(REDUCE_MAX(head) over H, W)
    -> DEQUANTIZE each (float32 outputs seg, mask, peak)

The skip path (enc1, its padding, elu, pool, up1, both concatenations, up2) shares one scale and
zero point, as CONCATENATION's int8 kernel requires of its inputs and output.

Restrictions: batch 1, static shapes; the weights are normal (std 0.5; FULLY_CONNECTED 0.08,
TRANSPOSE_CONV 0.3, the U-Net head 0.1) quantized symmetrically per output channel except
FULLY_CONNECTED (per tensor), biases int32 with scale = input scale * weight scale, as TFLite
requires.

Usage: python -m converter.zoo.models.make_int8_tflite OUT.tflite [--seed N] [--model unet];
the zoo (`source = "generated:make_int8_tflite.py"`, `format = "tflite"`, `args = {seed, model}`)
calls `make(path, seed=, model=)`.
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


def _per_channel(mb: _Builder, name: str, w: np.ndarray, axis: int
                 ) -> tuple[int, np.ndarray, np.ndarray]:
    """Symmetric int8 weights, one scale per channel along `axis`: (tensor, the dequantized
    weights, the scales)."""
    peak = np.max(np.abs(np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)), axis=1)
    scale = np.maximum(peak, 1e-6) / 127.0
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    idx = mb.tensor(name, w.shape, S.TensorType.INT8, scale, [0] * len(scale), axis, q)
    return idx, q.astype(np.float64) * scale.reshape(shape), scale


def _bias(mb: _Builder, name: str, b: np.ndarray, scale: np.ndarray) -> tuple[int, np.ndarray]:
    """An int32 bias with `scale` (input scale x weight scale): (tensor, its float values)."""
    q = np.round(b / scale).astype(np.int32)
    idx = mb.tensor(name, b.shape, S.TensorType.INT32, scale, [0] * len(scale), 0, q)
    return idx, q * scale


def make_int8_cnn(seed: int = 0) -> bytes:
    """The model's bytes (see the module docstring)."""
    rng = np.random.default_rng(seed)
    mb = _Builder()
    calib = (rng.integers(-128, 128, (32, 8, 8, 3)) - IN_ZP) * IN_SCALE

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
        wi, wf, ws = _per_channel(mb, f"{name}.w", w, 3 if depthwise else 0)
        bi, bf = _bias(mb, f"{name}.b", rng.normal(0.0, 0.1, len(ws)), s_in * ws)
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
    bi, bfc = _bias(mb, "fc.b", rng.normal(0.0, 0.1, 10), np.full(10, sa * ws))
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


def _opts(cls: type, **fields: object) -> object:
    """A builtin-options object of the schema with `fields` set."""
    o = cls()
    for k, v in fields.items():
        setattr(o, k, v)
    return o


def _shape_const(mb: _Builder, name: str, values: Sequence[int] | np.ndarray) -> int:
    """An int32 constant without quantization (sizes, paddings, axes)."""
    data = np.asarray(values, np.int32)
    return mb.tensor(name, data.shape, S.TensorType.INT32, [], [], 0, data)


def make_int8_unet(seed: int = 0) -> bytes:
    """An int8 U-Net with float I/O, as LiteRT's converter writes quantized models (see the
    module docstring)."""
    rng = np.random.default_rng(seed)
    w_enc, w_down = rng.normal(0, 0.5, (8, 3, 3, 3)), rng.normal(0, 0.5, (1, 3, 3, 8))
    w_mid, w_up = rng.normal(0, 0.5, (16, 1, 1, 8)), rng.normal(0, 0.3, (8, 2, 2, 16))
    w_head = rng.normal(0, 0.1, (4, 3, 3, 24))
    b_enc, b_down, b_mid, b_up, b_head = (rng.normal(0.0, 0.1, n) for n in (8, 8, 16, 8, 4))
    fx = rng.uniform(-1.0, 1.0, (8, 16, 16, 3))  # calibration batch
    # float pass: the skip path (enc1, elu, up1, both concatenations, the resize) shares one
    # scale and zero point, as CONCATENATION's int8 kernel requires of its inputs and output
    f1 = np.maximum(_conv(fx, w_enc, b_enc, 1, True), 0.0)
    fd1 = _conv(np.pad(f1, ((0, 0), (1, 1), (1, 1), (0, 0))), w_down, b_down, 2, False, True)
    fe2 = np.where(fd1 > 0, fd1, np.expm1(np.minimum(fd1, 0.0)))
    fbt = _conv(fe2.reshape(-1, 4, 2, 4, 2, 8).mean(axis=(2, 4)), w_mid, b_mid, 1, True)
    flr = np.where(fbt > 0, fbt, 0.2 * fbt)
    fu = np.einsum("nijc,oabc->niajbo", flr, w_up).reshape(-1, 8, 8, 8) + b_up
    skip = _range_quant(np.concatenate([f1.ravel(), fe2.ravel(), fu.ravel()]))
    fc2 = np.concatenate([np.repeat(np.repeat(np.concatenate([fu, fe2], axis=3), 2, axis=1),
                                    2, axis=2), f1], axis=3)
    fh = _conv(fc2, w_head, b_head, 1, True)

    mb = _Builder()
    op, opt, bo = S.BuiltinOperator, S.BuiltinOptions, S
    x = mb.tensor("x", [1, 16, 16, 3], S.TensorType.FLOAT32, [], [])
    mb.sg.inputs.append(x)
    s_in, z_in = _range_quant(fx, 1.0)
    q = mb.act("x_q", [1, 16, 16, 3], s_in, z_in)
    mb.op(op.QUANTIZE, 1, [x], [q], opt.NONE, None)
    relu, none = S.ActivationFunctionType.RELU, S.ActivationFunctionType.NONE

    def conv(name: str, inp: int, s_i: float, w: np.ndarray, b: np.ndarray, out: np.ndarray,
             stride: int, same: bool, activation: int, depthwise: bool = False,
             params: tuple[float, int] | None = None) -> tuple[int, float]:
        wi, _, ws = _per_channel(mb, f"{name}.w", w, 3 if depthwise else 0)
        bi, _ = _bias(mb, f"{name}.b", b, s_i * ws)
        scale, zp = params or _range_quant(out)
        t = mb.act(name, [1, *out.shape[1:]], scale, zp)
        cls = bo.DepthwiseConv2DOptionsT if depthwise else bo.Conv2DOptionsT
        extra = {"depthMultiplier": 1} if depthwise else {}
        mb.op(op.DEPTHWISE_CONV_2D if depthwise else op.CONV_2D, 3, [inp, wi, bi], [t],
              opt.DepthwiseConv2DOptions if depthwise else opt.Conv2DOptions,
              _opts(cls, padding=S.Padding.SAME if same else S.Padding.VALID, strideW=stride,
                    strideH=stride, dilationWFactor=1, dilationHFactor=1,
                    fusedActivationFunction=activation, **extra))
        return t, scale

    def act(name: str, shape: Sequence[int], params: tuple[float, int]) -> int:
        return mb.act(name, shape, *params)

    # encoder: CONV_2D + RELU, PAD, DEPTHWISE_CONV_2D stride 2, ELU, AVERAGE_POOL_2D
    e1, _ = conv("enc1", q, s_in, w_enc, b_enc, f1, 1, True, relu, params=skip)
    e1p = act("enc1_pad", [1, 18, 18, 8], skip)
    pads = np.array([[0, 0], [1, 1], [1, 1], [0, 0]])
    mb.op(op.PAD, 2, [e1, _shape_const(mb, "pads", pads)], [e1p],
          opt.PadOptions, bo.PadOptionsT())
    d1, _ = conv("down1", e1p, skip[0], w_down, b_down, fd1, 2, False, none, depthwise=True)
    e2 = act("elu", [1, 8, 8, 8], skip)
    mb.op(op.ELU, 1, [d1], [e2], opt.NONE, None)
    p2 = act("pool", [1, 4, 4, 8], skip)
    mb.op(op.AVERAGE_POOL_2D, 2, [e2], [p2], opt.Pool2DOptions,
          _opts(bo.Pool2DOptionsT, padding=S.Padding.VALID, strideW=2, strideH=2,
                filterWidth=2, filterHeight=2, fusedActivationFunction=none))
    # bottleneck: CONV_2D 1x1, LEAKY_RELU
    bt, _ = conv("mid", p2, skip[0], w_mid, b_mid, fbt, 1, True, none)
    leaky = _range_quant(flr)
    lr = act("leaky", [1, 4, 4, 16], leaky)
    mb.op(op.LEAKY_RELU, 1, [bt], [lr], opt.LeakyReluOptions,
          _opts(bo.LeakyReluOptionsT, alpha=0.2))
    # decoder: TRANSPOSE_CONV 2x2 stride 2, CONCATENATION, RESIZE_BILINEAR, CONCATENATION
    wti, _, wts = _per_channel(mb, "up1.w", w_up, 0)
    bti, _ = _bias(mb, "up1.b", b_up, leaky[0] * wts)
    u1 = act("up1", [1, 8, 8, 8], skip)
    mb.op(op.TRANSPOSE_CONV, 3, [_shape_const(mb, "up1.shape", [1, 8, 8, 8]), wti, lr, bti],
          [u1], opt.TransposeConvOptions,
          _opts(bo.TransposeConvOptionsT, padding=S.Padding.VALID, strideW=2, strideH=2,
                fusedActivationFunction=none))
    c1 = act("cat1", [1, 8, 8, 16], skip)
    mb.op(op.CONCATENATION, 1, [u1, e2], [c1], opt.ConcatenationOptions,
          _opts(bo.ConcatenationOptionsT, axis=3, fusedActivationFunction=none))
    u2 = act("up2", [1, 16, 16, 16], skip)
    mb.op(op.RESIZE_BILINEAR, 3, [c1, _shape_const(mb, "up2.size", [16, 16])], [u2],
          opt.ResizeBilinearOptions,
          _opts(bo.ResizeBilinearOptionsT, alignCorners=False, halfPixelCenters=True))
    c2 = act("cat2", [1, 16, 16, 24], skip)
    mb.op(op.CONCATENATION, 1, [u2, e1], [c2], opt.ConcatenationOptions,
          _opts(bo.ConcatenationOptionsT, axis=3, fusedActivationFunction=none))
    h, _ = conv("head", c2, skip[0], w_head, b_head, fh, 1, True, none)
    # heads: SOFTMAX, LOGISTIC, REDUCE_MAX -> LOGISTIC, each dequantized to a float output
    seg = act("seg_q", [1, 16, 16, 4], (OUT_SCALE, OUT_ZP))
    mb.op(op.SOFTMAX, 2, [h], [seg], opt.SoftmaxOptions, _opts(bo.SoftmaxOptionsT, beta=1.0))
    mask = act("mask_q", [1, 16, 16, 4], (OUT_SCALE, OUT_ZP))
    mb.op(op.LOGISTIC, 2, [h], [mask], opt.NONE, None)
    hq = mb.sg.tensors[h].quantization
    peak = act("peak_max", [1, 1, 1, 4], (hq.scale[0], hq.zeroPoint[0]))
    mb.op(op.REDUCE_MAX, 2, [h, _shape_const(mb, "axes", [1, 2])], [peak],
          opt.ReducerOptions, _opts(bo.ReducerOptionsT, keepDims=True))
    peak_q = act("peak_q", [1, 1, 1, 4], (OUT_SCALE, OUT_ZP))
    mb.op(op.LOGISTIC, 2, [peak], [peak_q], opt.NONE, None)
    for name, src, shape in (("seg", seg, [1, 16, 16, 4]), ("mask", mask, [1, 16, 16, 4]),
                             ("peak", peak_q, [1, 1, 1, 4])):
        out = mb.tensor(name, shape, S.TensorType.FLOAT32, [], [])
        mb.op(op.DEQUANTIZE, 2, [src], [out], opt.NONE, None)
        mb.sg.outputs.append(out)
    return mb.build()

MODELS = {"cnn": make_int8_cnn, "unet": make_int8_unet}
"""The models by name (`make(path, model=...)`)."""


def make(path: Path, seed: int = 0, model: str = "cnn") -> None:
    """Write the model `model` ("cnn", "unet") to `path` (the zoo's generator entry
    point)."""
    path.write_bytes(MODELS[model](seed))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", choices=sorted(MODELS), default="cnn")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    make(args.out, args.seed, args.model)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
