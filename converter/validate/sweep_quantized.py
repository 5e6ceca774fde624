"""Quantized patterns for the sweep: dequantizeLinear -> operator -> quantizeLinear graphs, the
patterns Chromium's LiteRT backend fuses into integer kernels (`converter.validate.sweep.sweep`
takes them as it takes the conformance cases, `kind="quantized"`; `python -m
converter.validate.sweep_quantized FOLDER` runs them and writes FOLDER/sweep_quantized.json).

Which operators and constraints: the fusion checks of Chromium's
`services/webnn/tflite/graph_builder_tflite.cc` (`CanFuseQuantizeAndGetOutput`): conv2d /
convTranspose2d (input, filter and an int32 bias all dequantized, output scale per tensor,
filter and bias scales per tensor or per output channel, bias scale ~= input scale x filter
scale, uint8 per tensor only), gemm (b per tensor, or per channel along N for int8 with
bTranspose), concat / maxPool2d / averagePool2d / pad / resample2d / reshape / gather (output
parameters equal to the input's), add / sub / mul (scale ratios in XNNPACK's ranges), max / min
(equal parameters), elu (int8), leakyRelu, sigmoid (output scale 1/256), tanh, softmax (int8
output 1/256 and zero point -128), relu / clamp (fused activations of conv2d), reduceSum / Mean
/ Max / Min, slice, split, transpose; matmul is not fused (it runs in float between DEQUANTIZE
and QUANTIZE). Each operator gets the parameters that meet those checks ("fused") and ones that
miss them ("float"), per-channel activations for a few ("channel": the input, "channel-out":
input and output; Chromium fuses none), in int8 and uint8, with integer graph inputs and outputs
("int I/O") and with float ones quantized at the input and dequantized at the output as LiteRT's
converter writes int8 models with float I/O ("float I/O"). The "integer <op>" cases are
quantizeLinear -> a data-movement operator on the integers -> dequantizeLinear, what the TFLite
importer writes when input and output share parameters.

Expected values: the graph run on the reference runtime (float64 numpy written from the spec:
the operator in float32 between an exact dequantizeLinear and a round-half-to-even
quantizeLinear). Tolerance: one quantization step (integer kernels requantize with fixed-point
multipliers, which may round the other way at a tie or a step boundary), ATOL 1 on integer
outputs and the output scale on float ones.

Case ids are `quantized:<index>`; names say operator, type, variant and I/O. Restrictions: NHWC
layouts only (the fusions see an NHWC operator; NCHW ones go through transposes that the
`layout-*` rules remove first); static shapes of at most 1x6x6x4.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from converter.validate.conformance import ConformanceCase
from converter.validate.qdq_graph import RANGE, CaseGraph, QParams, params

SEED = 20260523
SWEEP = "quantized"
"""The `sweep` name of the quantized sweep's document and of its known-failure entries."""
QTYPES = ("int8", "uint8")
IO = ("int", "float")
SIGMOID_OUT = {"int8": (1 / 256, -128), "uint8": (1 / 256, 0)}
"""LiteRT's fixed output parameters of LOGISTIC and SOFTMAX."""
TANH_OUT = {"int8": (1 / 128, 0), "uint8": (1 / 128, 128)}
"""LiteRT's fixed output parameters of TANH."""


Pattern = Callable[[CaseGraph, str], None]
"""Writes one pattern into a graph, for a variant (see `PATTERNS`)."""
X4 = (1, 6, 6, 4)


def _unary(op: str, options: dict[str, Any] | None = None,
           out: Callable[[str], QParams] | None = None, shape: Sequence[int] = X4) -> Pattern:
    """Variants: "same" / "other" output parameters than the input's; "channel" per-channel
    input, "channel-out" per-channel input and output."""
    def write(g: CaseGraph, variant: str) -> None:
        pin = params(g.qtype, "channel" if variant.startswith("channel") else "in")
        pout = out(g.qtype) if out else pin if variant in ("same", "channel-out") else \
            params(g.qtype, "out")
        y = g.op(op, [("input", g.source(shape, pin))], options)[0]
        g.sink(y, pout, len(shape))  # every unary pattern keeps the rank
    return write


def _reshape(g: CaseGraph, variant: str) -> None:
    pin = params(g.qtype, "in")
    pout = pin if variant == "same" else params(g.qtype, "out")
    y = g.op("reshape", [("input", g.source(X4, pin)), ("newShape", [1, 36, 4])])[0]
    g.sink(y, pout, 3)


def _slice_split(op: str) -> Pattern:
    def write(g: CaseGraph, variant: str) -> None:
        pin = params(g.qtype, "in")
        pout = pin if variant == "same" else params(g.qtype, "out")
        x = g.source(X4, pin)
        if op == "slice":
            g.sink(g.op("slice", [("input", x), ("starts", [0, 1, 2, 0]),
                                  ("sizes", [1, 4, 3, 4])])[0], pout, 4)
        elif op == "split":
            for y in g.op("split", [("input", x), ("splits", 2)], {"axis": 3}, outputs=2):
                g.sink(y, pout, 4)
        elif op == "transpose":
            g.sink(g.op("transpose", [("input", x)], {"permutation": [0, 3, 1, 2]})[0], pout, 4)
        else:  # gather
            idx = g.tensor(np.array([2, 0, 5], np.int32), constant=True)
            g.sink(g.op("gather", [("input", x), ("indices", idx)], {"axis": 1})[0], pout, 4)
    return write


def _binary(op: str) -> Pattern:
    def write(g: CaseGraph, variant: str) -> None:
        pin = params(g.qtype, "in")
        if variant == "same":
            pb, pout = pin, pin
        elif variant == "ratio":  # rhs scale / output scale below XNNPACK's 1/1024 (add, sub)
            pb, pout = QParams(0.00004, pin.zero), params(g.qtype, "out")
        else:
            pb, pout = QParams(0.03, RANGE[g.qtype][0] + 100), params(g.qtype, "out")
        a, b = g.source(X4, pin), g.source(X4, pb)
        g.sink(g.op(op, [("a", a), ("b", b)])[0], pout, 4)
    return write


def _concat(g: CaseGraph, variant: str) -> None:
    pin = params(g.qtype, "in")
    pb = pin if variant == "same" else params(g.qtype, "out")
    a, b = g.source(X4, pin), g.source((1, 6, 6, 2), pb)
    g.sink(g.op("concat", [("inputs", [a, b]), ("axis", 3)])[0], pin, 4)


def _weights(g: CaseGraph, shape: Sequence[int], axis: int, per_channel: bool) -> tuple[str,
                                                                                      np.ndarray]:
    """A dequantized weight constant in the case's type, per tensor or per channel along
    `axis`; (operand, its scales as a flat array)."""
    lo, hi = RANGE[g.qtype]
    w = g.rng.integers(lo, hi + 1, size=tuple(shape))
    n = shape[axis]
    scales = (g.rng.uniform(0.002, 0.02, n) if per_channel else np.full(1, 0.01)
              ).astype(np.float32)
    zero = 0 if g.qtype == "int8" else 128
    sshape = [1] * len(shape)
    if per_channel:
        sshape[axis] = n
    return g.qconst(w, scales.reshape(sshape), np.full(sshape, zero), g.qtype), scales


def _bias(g: CaseGraph, n: int, scales: np.ndarray, kind: str, in_scale: float) -> str | None:
    """The bias: "int32" dequantized with input scale x filter scale (what LiteRT's kernels
    assume), "scale" int32 with one scale for all channels (the first channel's product),
    "near" int32 with 1.5% more than the product (inside Chromium's 2% fusion margin) and
    large values, "float" a float32 constant, "none"."""
    values = g.rng.integers(-2000, 2000, n) * (100 if kind == "near" else 1)
    if kind == "none":
        return None
    if kind == "float":
        return g.tensor((values * in_scale * float(scales[0])).astype(np.float32),
                        constant=True)
    bs = (np.float64(in_scale) * scales.astype(np.float64)).astype(np.float32)
    if kind == "scale":
        bs = bs[:1]
    elif kind == "near":
        bs = (bs * 1.015).astype(np.float32)
    return g.qconst(values, bs.reshape(-1), np.zeros(bs.shape[0], np.int32), "int32")


def _conv(kind: str) -> Pattern:
    """conv2d ("conv"), depthwise conv2d ("depthwise"), convTranspose2d ("transpose");
    variant "<per-tensor|per-channel>[-<bias kind>][-<relu|relu6>]"."""
    def write(g: CaseGraph, variant: str) -> None:
        parts = variant.split("-")
        per_channel = parts[0] == "channel"
        bias_kind = parts[1] if len(parts) > 1 else "int32"
        act = parts[2] if len(parts) > 2 else ""
        pin, pout = params(g.qtype, "in"), QParams(0.2, params(g.qtype, "out").zero)
        x = g.source(X4 if kind != "transpose" else (1, 3, 3, 4), pin)
        if kind == "depthwise":
            w, scales = _weights(g, (1, 3, 3, 4), 3, per_channel)
            options: dict[str, Any] = {"inputLayout": "nhwc", "filterLayout": "ihwo",
                                       "groups": 4, "padding": [1, 1, 1, 1]}
            n, op = 4, "conv2d"
        elif kind == "conv":
            w, scales = _weights(g, (5, 3, 3, 4), 0, per_channel)
            options = {"inputLayout": "nhwc", "filterLayout": "ohwi", "padding": [1, 1, 1, 1]}
            n, op = 5, "conv2d"
        else:
            w, scales = _weights(g, (5, 3, 3, 4), 0, per_channel)
            options = {"inputLayout": "nhwc", "filterLayout": "ohwi", "strides": [2, 2],
                       "padding": [1, 0, 1, 0]}
            n, op = 5, "convTranspose2d"
        bias = _bias(g, n, scales, bias_kind, pin.tensor_scale)
        if bias is not None:
            options["bias"] = bias
        y = g.op(op, [("input", x), ("filter", w)], options)[0]
        if act == "relu":
            y = g.op("relu", [("input", y)])[0]
        elif act == "relu6":
            y = g.op("clamp", [("input", y)], {"minValue": 0, "maxValue": 6})[0]
        g.sink(y, pout, 4)
    return write


def _gemm(op: str) -> Pattern:
    """gemm / matmul of a [3, 8] input with [8, 6] weights; variant
    "<tensor|channel>[-t|-row]": "t" gemm's b stored [6, 8] with bTranspose, "row" per-channel
    scales of shape [1, 6] on b stored [8, 6] (the other way round: [6, 1] on [6, 8])."""
    def write(g: CaseGraph, variant: str) -> None:
        per_channel = variant.startswith("channel")
        transposed = variant.endswith("-t")
        pin, pout = params(g.qtype, "in"), QParams(0.3, params(g.qtype, "out").zero)
        a = g.source((3, 8), pin)
        b, scales = _weights(g, (6, 8) if transposed else (8, 6), 0 if transposed else 1,
                             per_channel)
        options: dict[str, Any] = {}
        if op == "gemm":
            if transposed:
                options["bTranspose"] = True
            if not per_channel:
                c = _bias(g, 6, scales, "int32", pin.tensor_scale)
                options["c"] = c
        g.sink(g.op(op, [("a", a), ("b", b)], options or None)[0], pout, 2)
    return write


def _softmax(g: CaseGraph, variant: str) -> None:
    pin = params(g.qtype, "in")
    pout = QParams(*SIGMOID_OUT[g.qtype]) if variant == "kernel" else params(g.qtype, "out")
    g.sink(g.op("softmax", [("input", g.source((3, 10), pin)), ("axis", 1)])[0], pout, 2)


def _fixed(op: str, table: dict[str, tuple[float, int]],
           options: dict[str, Any] | None = None) -> Pattern:
    """An activation whose LiteRT kernel wants fixed output parameters: variant "kernel"
    those, "scale" the kernel's scale with zero point 0 (int8) / 128 (uint8), "float"
    others."""
    def write(g: CaseGraph, variant: str) -> None:
        pin = params(g.qtype, "in")
        scale, zero = table[g.qtype]
        if variant == "kernel":
            pout = QParams(scale, zero)
        elif variant == "scale":
            pout = QParams(scale, 0 if g.qtype == "int8" else 128)
        else:
            pout = params(g.qtype, "out")
        g.sink(g.op(op, [("input", g.source(X4, pin))], options)[0], pout, 4)
    return write


def _pad(g: CaseGraph, variant: str) -> None:
    pin = params(g.qtype, "in")
    options: dict[str, Any] = {"value": 0.5} if variant == "value" else (
        {"mode": "reflection"} if variant == "reflection" else {})
    y = g.op("pad", [("input", g.source(X4, pin)), ("beginningPadding", [0, 1, 2, 0]),
                     ("endingPadding", [0, 2, 1, 0])], options or None)[0]
    g.sink(y, pin, 4)


def _integer(op: str) -> Pattern:
    """quantizeLinear -> `op` on the integers -> dequantizeLinear with the same parameters:
    what the TFLite importer emits for data-movement operators whose input and output share
    quantization parameters (`op_mappings/tflite/_util.raw_ok`). Float I/O only."""
    def write(g: CaseGraph, variant: str) -> None:
        p = params(g.qtype, "in")
        x = g.tensor(g.rng.uniform(-3.0, 3.0, X4).astype(np.float32), constant=False, stem="x")
        q = g.q(x, p, 4)
        if op == "concat":
            y = g.tensor(g.rng.uniform(-3.0, 3.0, (1, 6, 6, 2)).astype(np.float32),
                         constant=False, stem="x")
            out = g.op("concat", [("inputs", [q, g.q(y, p, 4)]), ("axis", 3)])[0]
        else:
            args, options = INTEGER_OPS[op]
            if op == "gather":
                args = [("indices", g.tensor(np.array([2, 0, 5], np.int32), constant=True))]
            if op == "pad":
                options = {"value": p.zero}
            out = g.op(op, [("input", q), *args], options or None)[0]
        rank = 3 if op == "reshape" else 4
        g.outputs.append((g.dq(out, *p.arrays(rank, g.qtype), g.qtype, rank), p))
    return write


INTEGER_OPS: dict[str, tuple[list[tuple[str, Any]], dict[str, Any]]] = {
    "concat": ([], {}),
    "pad": ([("beginningPadding", [0, 1, 2, 0]), ("endingPadding", [0, 2, 1, 0])], {}),
    "maxPool2d": ([], {"layout": "nhwc", "windowDimensions": [2, 2], "strides": [2, 2]}),
    "reduceMax": ([], {"axes": [1, 2], "keepDimensions": True}),
    "resample2d": ([], {"scales": [2.0, 2.0], "axes": [1, 2]}),
    "reshape": ([("newShape", [1, 36, 4])], {}),
    "transpose": ([], {"permutation": [0, 3, 1, 2]}),
    "slice": ([("starts", [0, 1, 2, 0]), ("sizes", [1, 4, 3, 4])], {}),
    "gather": ([], {"axis": 1}),
    "tile": ([("repetitions", [1, 1, 2, 1])], {}),
    "reverse": ([], {"axes": [2]}),
}
"""Data-movement operators the TFLite importer runs on quantized integers (`_integer`): their
arguments after the input, and options (gather's indices and pad's value are set per case)."""


NHWC = {"layout": "nhwc"}
PATTERNS: dict[str, tuple[Pattern, tuple[str, ...]]] = {
    "conv2d": (_conv("conv"), ("tensor", "channel", "tensor-float", "channel-scale",
                               "tensor-near", "tensor-int32-relu",
                               "channel-int32-relu6")),
    "conv2d depthwise": (_conv("depthwise"), ("tensor", "channel", "channel-scale")),
    "convTranspose2d": (_conv("transpose"), ("tensor", "channel", "channel-scale")),
    "gemm": (_gemm("gemm"), ("tensor", "tensor-t", "channel-t", "channel")),
    "matmul": (_gemm("matmul"), ("tensor", "channel")),
    "add": (_binary("add"), ("same", "other", "ratio")),
    "sub": (_binary("sub"), ("same", "other")),
    "mul": (_binary("mul"), ("same", "other")),
    "max": (_binary("max"), ("same", "other")),
    "min": (_binary("min"), ("same", "other")),
    "concat": (_concat, ("same", "other")),
    "averagePool2d": (_unary("averagePool2d", {**NHWC, "windowDimensions": [2, 2],
                                               "strides": [2, 2]}), ("same", "other", "channel",
                                                               "channel-out")),
    "maxPool2d": (_unary("maxPool2d", {**NHWC, "windowDimensions": [3, 3],
                                       "padding": [1, 1, 1, 1]}),
                  ("same", "other", "channel", "channel-out")),
    "resample2d linear": (_unary("resample2d", {"mode": "linear", "scales": [2.0, 2.0],
                                                "axes": [1, 2]}),
                          ("same", "other", "channel", "channel-out")),
    "resample2d nearest": (_unary("resample2d", {"scales": [2.0, 2.0], "axes": [1, 2]}),
                           ("same",)),
    "pad": (_pad, ("zero", "value", "reflection")),
    "relu": (_unary("relu"), ("same", "other", "channel", "channel-out")),
    "clamp": (_unary("clamp", {"minValue": 0, "maxValue": 6}), ("same", "other")),
    "elu": (_unary("elu"), ("other",)),
    "leakyRelu": (_unary("leakyRelu", {"alpha": 0.1}), ("same", "other", "channel")),
    "sigmoid": (_fixed("sigmoid", SIGMOID_OUT), ("kernel", "scale", "other")),
    "tanh": (_fixed("tanh", TANH_OUT), ("kernel", "other")),
    "softmax": (_softmax, ("kernel", "other")),
    "reduceMax": (_unary("reduceMax", {"axes": [1, 2], "keepDimensions": True}),
                  ("same", "other")),
    "reduceMean": (_unary("reduceMean", {"axes": [1, 2], "keepDimensions": True}),
                   ("same", "other", "channel", "channel-out")),
    "reduceSum": (_unary("reduceSum", {"axes": [3], "keepDimensions": True}),
                  ("same", "other")),
    "reduceMin": (_unary("reduceMin", {"axes": [1, 2], "keepDimensions": True}),
                  ("same", "other")),
    "reshape": (_reshape, ("same", "other")),
    "transpose": (_slice_split("transpose"), ("same", "other")),
    "slice": (_slice_split("slice"), ("same", "other")),
    "split": (_slice_split("split"), ("same", "other")),
    "gather": (_slice_split("gather"), ("same", "other")),
    **{f"integer {op}": (_integer(op), ("same",)) for op in INTEGER_OPS},
}
"""Pattern name -> (writer, variants)."""




def _case(name: str, g: CaseGraph) -> dict[str, Any]:
    from converter.core.webnn import ML, MLGraphBuilder
    from converter.validate.conformance import case_graph

    desc: dict[str, Any] = {"inputs": g.inputs, "operators": g.operators,
                            "expectedOutputs": {}}
    for out, _ in g.outputs:  # placeholder descriptors, replaced below
        desc["expectedOutputs"][out] = {"data": [0], "descriptor": {"shape": [],
                                                                    "dataType": "int8"}}
    graph, feeds = case_graph({"graph": desc}, MLGraphBuilder(ML().create_context()))
    values = graph.context.compute(graph, feeds)
    for out, _ in g.outputs:
        v = np.asarray(values[out])
        desc["expectedOutputs"][out] = {"data": v.ravel().tolist(), "descriptor": {
            "shape": list(v.shape), "dataType": v.dtype.name}}
    step = 1 if g.io == "int" else max(float(np.max(p.scale)) for _, p in g.outputs) * 1.0001
    return {"name": name, "graph": desc, "tolerance": {"metricType": "ATOL", "value": step}}


def quantized_cases(only: Sequence[str] | None = None) -> list[ConformanceCase]:
    """Every pattern x variant x quantized type x I/O kind, in that order (ids
    `quantized:<index>`; the same seed gives the same cases); `only` keeps the patterns
    named."""
    out, index = [], 0
    rng = np.random.default_rng(SEED)
    for pattern, (write, variants) in PATTERNS.items():
        for variant in variants:
            for qtype in QTYPES:
                for io in IO if not pattern.startswith("integer ") else ("float",):
                    g = CaseGraph(qtype, io, np.random.default_rng(rng.integers(2 ** 32)))
                    index += 1
                    if only is not None and pattern not in only:
                        continue
                    write(g, variant)
                    name = f"{pattern} {qtype} {variant} {io} I/O"
                    out.append(ConformanceCase(f"{SWEEP}:{index - 1}", name, _case(name, g)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m converter.validate.sweep_quantized FOLDER [--target T] [--filter TEXT]`: run
    the quantized cases (those whose id or name contains a TEXT) in the browser as converted
    and with the target's rules, write FOLDER/sweep_quantized.json, and say the counts, the
    new deviations and the stale known failures (exit 1 when there is one)."""
    import argparse
    from pathlib import Path

    from converter.passes.targets import load_target
    from converter.validate.sweep import check_sweep, sweep, write_sweep

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--target", default="chromium-tflite")
    parser.add_argument("--filter", action="append", default=[])
    args = parser.parse_args(argv)
    cases = [c for c in quantized_cases()
             if not args.filter or any(f in c.id or f in c.name for f in args.filter)]
    target = load_target(args.target)
    doc = sweep(cases, target=target, progress=print, kind=SWEEP)
    write_sweep(doc, None, args.folder, name="sweep_quantized.json")
    new, stale = check_sweep(doc, target.known_failures())
    print(json.dumps(doc["counts"]))
    for line in [*(f"new deviation: {n}" for n in new), *(f"stale: {s}" for s in stale)]:
        print(line)
    return 1 if new or stale else 0


__all__ = ["PATTERNS", "QTYPES", "SWEEP", "QParams", "main", "params", "quantized_cases"]


if __name__ == "__main__":
    raise SystemExit(main())
