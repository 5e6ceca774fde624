"""The native-torch section of benchmarks/runtime_zoo.py: the torch backend against the same
small networks (a ResNet and a transformer encoder built here) run natively in torch, on
the CPU or on CUDA."""

from __future__ import annotations

import platform
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from interleaved_timing import Runner, matches, time_interleaved


def torch_section(device: str, warmup: int, repeat: int, threads: int = 1, *,
                  cuda_graphs: bool = False) -> list[dict[str, Any]]:
    """The torch backend against the same network run natively in torch on `device` ("cpu"
    or "cuda"), for small torch-built networks exported to ONNX with torch.onnx.export and
    converted (for target "spec": the graph a Python program runs). Both sides start from the
    numpy input on the host and end with numpy outputs (copies to and from the device are
    timed on both). `cuda_graphs` turns the backend's CUDA-graph replay on or off (CUDA
    only). Empty when torch is not importable or `device` is "cuda" and
    torch.cuda.is_available() is False."""
    try:
        import torch
    except ImportError:
        return []
    if device == "cuda" and not torch.cuda.is_available():
        return []
    import tempfile

    import converter
    import converter.runtimes.torch  # noqa: F401
    from converter.runtimes import get_backend

    torch.manual_seed(0)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    rows = []
    try:
        for name, net, example in _torch_nets(torch):
            net = net.eval()
            with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                path = Path(tmp) / f"{name}.onnx"
                torch.onnx.export(net, (example,), str(path), input_names=["x"],
                                  output_names=["y"], opset_version=17, dynamo=False)
                result = converter.convert(str(path), target="spec")
            options = {"cuda_graphs": cuda_graphs} if device == "cuda" else {}
            exe = get_backend("torch", device, threads=threads, **options).compile(result.graph)
            native, ours = _torch_runners(torch, device, net.to(device), example, exe,
                                          result.output_names)
            ok, err = matches(ours(), native())
            med, _ = time_interleaved({"native": native, "torch-backend": ours}, warmup,
                                      repeat)
            rows.append({"model": name, "device": device,
                         "device_name": (torch.cuda.get_device_name(0) if device == "cuda"
                                         else platform.processor() or platform.machine()),
                         "threads": threads, "cuda_graphs": cuda_graphs, "native_ms": med["native"] * 1e3,
                         "backend_ms": med["torch-backend"] * 1e3,
                         "ratio": med["torch-backend"] / med["native"], "ok": ok,
                         "max_abs_error": err})
    finally:
        torch.set_num_threads(old_threads)
    return rows


def _torch_runners(torch: Any, device: str, net: Any, example: Any, exe: Any,
                   names: Sequence[str]) -> tuple[Runner, Runner]:
    """Native torch and the converted graph on the torch backend, both on `device`, both
    starting from the numpy input on the host (copied to the device each run), synchronised
    on CUDA, and copying the outputs back to the host."""
    feeds = {"x": example.numpy()}
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def native() -> list[np.ndarray]:
        with torch.inference_mode():
            y = net(torch.from_numpy(feeds["x"]).to(device))
        sync()
        return [y.cpu().numpy()]

    def ours() -> list[np.ndarray]:
        out = exe.run(feeds)
        sync()
        return [out[n] for n in names]

    return native, ours


def _torch_nets(torch: Any) -> list[tuple[str, Any, Any]]:
    nn = torch.nn

    class Block(nn.Module):  # type: ignore[misc,name-defined]  # torch is read as untyped
        def __init__(self, c: int) -> None:
            super().__init__()
            self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b1 = nn.BatchNorm2d(c)
            self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b2 = nn.BatchNorm2d(c)

        def forward(self, x: Any) -> Any:
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(x + self.b2(self.c2(y)))

    resnet = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3), nn.BatchNorm2d(64),
                           nn.ReLU(), nn.MaxPool2d(3, 2, 1), Block(64), Block(64),
                           nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True), 2,
        enable_nested_tensor=False)
    return [("torch-resnet-small", resnet, torch.randn(1, 3, 224, 224)),
            ("torch-transformer-small", encoder, torch.randn(1, 64, 128))]
