"""Conversion of a large model: time and peak memory vs onnxruntime session creation.

```bash
.venv/bin/python benchmarks/convert_large.py                 # VGG-19 shape, ~548 MB weights
.venv/bin/python benchmarks/convert_large.py --dir /tmp/big --inline --repeat 3
```

1. Generates a VGG-19-shaped ONNX model (16 Conv+Relu, 5 MaxPool, Flatten, 3 Gemm,
   Softmax; input [1, 3, 224, 224]) with seeded random float32 weights (143.7 M parameters,
   574.7 MB). Weights go to one external-data file (written tensor by tensor, so generation
   never holds the whole model), or inline in the .onnx with `--inline`.
2. Measures, each in a fresh subprocess (so peaks do not mix): `converter.convert(path)`
   and `onnxruntime.InferenceSession(path)` (default options, CPU provider). Reported per
   measurement: wall time of the call only (interpreter start and imports excluded), the
   process's peak RSS during the call minus its peak before it (`VmHWM` from
   /proc/self/status, Linux), and that peak relative to the weight bytes.

Targets (issue): conversion time <= session creation time; conversion peak memory
<= 1.5 x the weight bytes; weights copied at most once. External-data weights are read through read-only memory maps
and never copied: `MLGraphBuilder.constant()` shares memory that nothing can write instead of
copying it (copying it would be indistinguishable), so conversion touches no weight pages.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[1]

VGG19: list[int | str] = [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
         512, 512, 512, 512, "M"]


def _external(name: str, shape: list[int], location: str, offset: int) -> TensorProto:
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
    t.data_location = TensorProto.EXTERNAL
    length = int(np.prod(shape)) * 4
    for key, value in (("location", location), ("offset", str(offset)),
                       ("length", str(length))):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t


def generate(path: Path, inline: bool = False, seed: int = 0) -> int:
    """Write the model; returns the weight bytes."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    data_name = path.name + ".data"
    offset = 0
    fh = None if inline else open(path.with_name(data_name), "wb")  # noqa: SIM115

    def weight(name: str, shape: list[int], fan_in: int) -> None:
        nonlocal offset
        arr = (rng.standard_normal(size=shape, dtype=np.float32) *
               np.float32(np.sqrt(2.0 / fan_in)))
        if inline:
            inits.append(onnx.numpy_helper.from_array(arr, name))
        else:
            assert fh is not None
            fh.write(arr.tobytes())
            inits.append(_external(name, shape, data_name, offset))
            offset += arr.nbytes

    x, channels, conv = "input", 3, 0
    for item in VGG19:
        if item == "M":
            out = f"pool{conv}"
            nodes.append(helper.make_node("MaxPool", [x], [out], kernel_shape=[2, 2],
                                          strides=[2, 2]))
            x = out
            continue
        assert isinstance(item, int)
        conv += 1
        weight(f"conv{conv}.w", [item, channels, 3, 3], channels * 9)
        weight(f"conv{conv}.b", [item], 1)
        nodes.append(helper.make_node("Conv", [x, f"conv{conv}.w", f"conv{conv}.b"],
                                      [f"conv{conv}"], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"conv{conv}"], [f"relu{conv}"]))
        x, channels = f"relu{conv}", item
    nodes.append(helper.make_node("Flatten", [x], ["flat"]))
    x, features = "flat", channels * 7 * 7
    for i, width in enumerate([4096, 4096, 1000], start=1):
        weight(f"fc{i}.w", [width, features], features)
        weight(f"fc{i}.b", [width], 1)
        nodes.append(helper.make_node("Gemm", [x, f"fc{i}.w", f"fc{i}.b"], [f"fc{i}"],
                                      transB=1))
        x, features = f"fc{i}", width
        if i < 3:
            nodes.append(helper.make_node("Relu", [x], [f"fc{i}_relu"]))
            x = f"fc{i}_relu"
    nodes.append(helper.make_node("Softmax", [x], ["prob"], axis=1))
    if fh is not None:
        fh.close()
    graph = helper.make_graph(
        nodes, "vgg19_random",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              ir_version=8, producer_name="benchmarks/convert_large.py")
    with open(path, "wb") as stream:
        stream.write(model.SerializeToString())
    return sum(int(np.prod(t.dims)) * 4 for t in inits)


_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})


what, path = sys.argv[1], sys.argv[2]
if what == "convert":
    import converter, converter.api, converter.importer, op_mappings.onnx as reg
    reg.load_all()
else:
    import onnxruntime as ort
def hwm():
    # VmHWM (peak RSS of this process image, KiB); ru_maxrss would include the parent's
    # peak, which Linux carries into children across fork/exec
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


before = hwm()
t0 = time.perf_counter()
if what != "onnxruntime":
    result = converter.convert(path)
    ops = len(result.graph.operations)
else:
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ops = len(sess.get_outputs())
elapsed = time.perf_counter() - t0
peak = hwm()
print(json.dumps({{"seconds": elapsed, "rss_before_kib": before, "rss_peak_kib": peak,
                  "ops": ops}}))
"""


def measure(what: str, path: Path) -> dict[str, float]:
    """Run one measurement in a fresh interpreter; peak RSS delta in bytes."""
    code = _CHILD.format(root=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, what, str(path)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-3000:]}")
    data: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    data["peak_bytes"] = (data["rss_peak_kib"] - data["rss_before_kib"]) * 1024
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", help="folder for the generated model (default: a temp dir)")
    parser.add_argument("--inline", action="store_true", help="store weights in the .onnx")
    parser.add_argument("--repeat", type=int, default=2, help="measurements per tool")
    parser.add_argument("--json", help="write the results to this file")
    opts = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(opts.dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "vgg19_random.onnx"
        weight_bytes = generate(path, inline=opts.inline)
        files = sum(p.stat().st_size for p in folder.glob("vgg19_random.onnx*"))
        print(f"model: {path} ({'inline' if opts.inline else 'external data'}), weights "
              f"{weight_bytes / 1e6:.1f} MB, files {files / 1e6:.1f} MB")
        results: dict[str, list[dict[str, float]]] = {"convert": [], "onnxruntime": []}
        for _ in range(opts.repeat):
            for what in results:
                results[what].append(measure(what, path))
        best = {k: min(v, key=lambda r: r["seconds"]) for k, v in results.items()}
        peak = {k: max(r["peak_bytes"] for r in v) for k, v in results.items()}
        print(f"{'':28s}{'time (best)':>14s}{'peak RSS delta':>18s}{'x weights':>11s}")
        for name, label in (("convert", "converter.convert"),
                            ("onnxruntime", "ort.InferenceSession")):
            if name not in results:
                continue
            print(f"{label:28s}{best[name]['seconds']:>12.2f} s{peak[name] / 1e6:>15.1f} MB"
                  f"{peak[name] / weight_bytes:>10.2f}x")
        ratio = best["convert"]["seconds"] / best["onnxruntime"]["seconds"]
        print(f"conversion / session creation time: {ratio:.2f} (target <= 1); conversion "
              f"peak {peak['convert'] / weight_bytes:.2f}x weights (target <= 1.5x)")
        if opts.json:
            Path(opts.json).write_text(json.dumps(
                {"weight_bytes": weight_bytes, "inline": opts.inline, "results": results},
                indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
