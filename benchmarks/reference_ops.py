"""Single-threaded speed of the numpy reference backend against onnxruntime, op by op.

    python benchmarks/reference_ops.py [--repeat N] [--warmup N] [--json PATH] [--only TEXT]

Each case builds a one-op WebNN graph (graph input + constant weights, as a converted model has
them) and the equivalent one-node ONNX model, checks that both give the same result, and
times both: the median of `--repeat` runs after `--warmup` runs, the reference and
onnxruntime runs interleaved so that load from other processes hits both alike. BLAS, OpenMP and onnxruntime
are pinned to one thread (onnxruntime: intra_op_num_threads=1, inter_op_num_threads=1,
sequential execution). The table lists wall and process-CPU times and their ratios
reference / onnxruntime (on a busy machine the CPU-time ratio is the steadier one), and the
geometric mean of the ratios over the ResNet-50 convolutions.

Cases: every distinct ResNet-50 convolution shape class (7x7/2 stem, the 1x1 reductions and
expansions and the 3x3 convolutions of the four stages at 56, 28, 14 and 7 pixels, and the
strided 1x1 projection), a 1024x1024 float32 matmul (skipped when the builder has no
matmul), maxPool2d 3x3/2 on 1x64x112x112 and a global averagePool2d on 1x2048x7x7.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from converter.core.webnn import ML, MLGraphBuilder, MLOperand  # noqa: E402

RNG = np.random.default_rng(0)
RESNET = "resnet50-conv"


@dataclass
class Case:
    name: str
    group: str
    x_shape: tuple[int, ...]
    build: Callable[[MLGraphBuilder, MLOperand], MLOperand]
    onnx_node: Callable[[], tuple[Any, list[Any]]]  # (node, initializers)


def conv_case(name: str, c: int, hw: int, o: int, k: int, stride: int = 1) -> Case:
    pad = k // 2
    w = (RNG.standard_normal((o, c, k, k)) / math.sqrt(c * k * k)).astype(np.float32)
    bias = RNG.standard_normal(o).astype(np.float32)

    def build(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
        return b.conv2d(x, b.constant(w), padding=[pad] * 4, strides=[stride, stride],
                        bias=b.constant(bias))

    def node() -> tuple[Any, list[Any]]:
        return (helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k],
                                 pads=[pad] * 4, strides=[stride, stride]),
                [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])

    return Case(name, RESNET, (1, c, hw, hw), build, node)


def matmul_case() -> Case:
    m = RNG.standard_normal((1024, 1024)).astype(np.float32)

    def build(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
        return b.matmul(x, b.constant(m))

    def node() -> tuple[Any, list[Any]]:
        return (helper.make_node("MatMul", ["x", "m"], ["y"]), [numpy_helper.from_array(m, "m")])

    return Case("matmul 1024x1024x1024", "other", (1024, 1024), build, node)


def max_pool_case() -> Case:
    def build(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
        return b.max_pool2d(x, window_dimensions=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])

    def node() -> tuple[Any, list[Any]]:
        return (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                 pads=[1, 1, 1, 1]), [])

    return Case("maxPool2d 3x3/2 1x64x112x112", "other", (1, 64, 112, 112), build, node)


def global_average_case() -> Case:
    def build(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
        return b.average_pool2d(x)

    def node() -> tuple[Any, list[Any]]:
        return helper.make_node("GlobalAveragePool", ["x"], ["y"]), []

    return Case("averagePool2d global 1x2048x7x7", "other", (1, 2048, 7, 7), build, node)


def cases() -> list[Case]:
    out = [conv_case("conv 7x7/2 3->64 @224", 3, 224, 64, 7, 2)]
    for hw, c in ((56, 64), (28, 128), (14, 256), (7, 512)):
        wide = 4 * c
        if c == 64:
            out.append(conv_case(f"conv 1x1 {c}->{c} @{hw}", c, hw, c, 1))
        out.append(conv_case(f"conv 1x1 {wide}->{c} @{hw}", wide, hw, c, 1))
        out.append(conv_case(f"conv 3x3 {c}->{c} @{hw}", c, hw, c, 3))
        out.append(conv_case(f"conv 1x1 {c}->{wide} @{hw} (expansion)", c, hw, wide, 1))
    out.append(conv_case("conv 1x1/2 256->512 @56 (projection)", 256, 56, 512, 1, 2))
    out += [matmul_case(), max_pool_case(), global_average_case()]
    return out


def median_times(fns: list[Callable[[], Any]], repeat: int, warmup: int
                 ) -> list[tuple[float, float]]:
    """(median wall seconds, median process CPU seconds) of each function. The runs are
    interleaved (a, b, a, b, ...) so that load from other processes hits every function
    alike; CPU time is what a single-threaded run costs even when the machine is busy."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    wall: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            cpu[i].append(time.process_time() - start_cpu)
            wall[i].append(time.perf_counter() - start)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(wall, cpu, strict=True)]


def ort_session(case: Case) -> ort.InferenceSession:
    node, inits = case.onnx_node()
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(case.x_shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def run_case(case: Case, repeat: int, warmup: int) -> dict[str, Any]:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", list(case.x_shape), "float32")
    try:
        y = case.build(b, x)
    except (AttributeError, NotImplementedError) as exc:
        return {"name": case.name, "group": case.group, "skipped": f"{exc}"}
    graph = b.build({"y": y})
    feed = RNG.standard_normal(case.x_shape).astype(np.float32)
    sess = ort_session(case)
    ref_out = ctx.compute(graph, {"x": feed})["y"]
    ort_out = sess.run(["y"], {"x": feed})[0]
    scale = float(np.abs(ort_out).max()) or 1.0
    max_err = float(np.abs(ref_out.astype(np.float64) - ort_out).max()) / scale
    (ref_s, ref_cpu), (ort_s, ort_cpu) = median_times(
        [lambda: ctx.compute(graph, {"x": feed}), lambda: sess.run(["y"], {"x": feed})],
        repeat, warmup)
    return {"name": case.name, "group": case.group, "reference_ms": ref_s * 1e3,
            "onnxruntime_ms": ort_s * 1e3, "ratio": ref_s / ort_s,
            "reference_cpu_ms": ref_cpu * 1e3, "onnxruntime_cpu_ms": ort_cpu * 1e3,
            "cpu_ratio": ref_cpu / ort_cpu, "max_abs_err_over_max_abs": max_err}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per case")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--only", help="run only cases whose name contains this text")
    args = parser.parse_args(argv)

    results = []
    print(f"{'':42s} {'wall time (median)':^30s}   {'CPU time (median)':^30s}")
    print(f"{'case':42s} {'reference':>10s} {'ort':>10s} {'ratio':>8s}   "
          f"{'reference':>10s} {'ort':>10s} {'ratio':>8s}")
    for case in cases():
        if args.only and args.only not in case.name:
            continue
        res = run_case(case, args.repeat, args.warmup)
        results.append(res)
        if "skipped" in res:
            print(f"{case.name:42s} skipped: {res['skipped']}")
            continue
        if res["max_abs_err_over_max_abs"] > 1e-4:
            print(f"{case.name:42s} RESULTS DIFFER (relative error "
                  f"{res['max_abs_err_over_max_abs']:.2e})")
        print(f"{case.name:42s} {res['reference_ms']:8.2f}ms {res['onnxruntime_ms']:8.2f}ms "
              f"{res['ratio']:7.2f}x   {res['reference_cpu_ms']:8.2f}ms "
              f"{res['onnxruntime_cpu_ms']:8.2f}ms {res['cpu_ratio']:7.2f}x")
        sys.stdout.flush()
    summary = {}
    for key in ("ratio", "cpu_ratio"):
        conv = [r[key] for r in results if r["group"] == RESNET and key in r]
        if conv:
            summary[key] = {"geomean": math.exp(sum(map(math.log, conv)) / len(conv)),
                            "worst": max(conv), "cases": len(conv)}
    if summary:
        print("ResNet-50 convolutions, reference / onnxruntime: geometric mean "
              f"{summary['ratio']['geomean']:.2f}x wall, {summary['cpu_ratio']['geomean']:.2f}x "
              f"CPU (worst {summary['ratio']['worst']:.2f}x wall, "
              f"{summary['cpu_ratio']['worst']:.2f}x CPU; {summary['ratio']['cases']} cases)")
    if args.json:
        args.json.write_text(json.dumps({
            "machine": {"platform": platform.platform(), "processor": platform.processor(),
                        "python": platform.python_version(), "numpy": np.__version__,
                        "onnxruntime": ort.__version__},
            "threads": 1, "repeat": args.repeat, "warmup": args.warmup,
            "resnet50_conv": summary, "cases": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
