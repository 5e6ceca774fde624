"""The "onnxruntime" backend: the graph lowered to ONNX (`converter.runtimes.onnxruntime.to_onnx.to_onnx`, with
`contrib_ops=True`: decomposed attention re-fused into onnxruntime's com.microsoft kernels) and
run by one onnxruntime InferenceSession, created once per compiled graph.

float16 semantics: this backend computes chains of float16 operations in float32 and rounds
to float16 only where a value leaves a chain (graph outputs, operators that run natively in
float16 such as max, min, relu or comparisons, and explicit casts), not after every
operation as WebNN specifies (`to_onnx(..., float16_chains=True)`, see
`converter.runtimes.onnxruntime.lowering.float16_chains`): results are at least as accurate as
per-operation rounding, but not bit-exact to it. The standard ONNX export (`--format onnx`)
keeps the per-operation rounding.

Devices: "cpu" (CPUExecutionProvider) and "cuda" (CUDAExecutionProvider first, CPU for the
nodes it lacks; ValueError when this onnxruntime build has no CUDA provider). Options:
`threads` (intra-op thread count, default 0 = onnxruntime's choice) and `opset` (the ONNX
opset of the lowered model, default 21). Graph optimizations are enabled (ORT_ENABLE_ALL:
constant folding, Conv/BatchNormalization/activation fusion, the blocked NCHWc layout).

Speed: on the CPU the converted zoo models run as fast as onnxruntime on the original ONNX
models (benchmarks/runtime_zoo.py); see `converter.runtimes.onnxruntime.to_onnx` for the lowering choices
that make that so. NaN handling follows onnxruntime's kernels once fused (e.g. a Relu fused
into a blocked-layout Conv maps NaN to 0), like onnxruntime on the original model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.errors import exception_text
from converter.core.webnn.context import MLGraph
from converter.core.webnn.errors import MLOperationError

#: Intra-op threads of sessions whose context gave no `threads` option (0 = onnxruntime's
#: default, one per core). Test suites creating many tiny sessions may set it to 1.
DEFAULT_THREADS = 0

_PROVIDERS = {"cpu": ["CPUExecutionProvider"],
              "cuda": ["CUDAExecutionProvider", "CPUExecutionProvider"]}


_ORT_TYPES = {"tensor(float)": "float32", "tensor(float16)": "float16",
              "tensor(double)": "float64", "tensor(int8)": "int8", "tensor(uint8)": "uint8",
              "tensor(int16)": "int16", "tensor(uint16)": "uint16", "tensor(int32)": "int32",
              "tensor(uint32)": "uint32", "tensor(int64)": "int64", "tensor(uint64)": "uint64"}
"""onnxruntime's names of the tensor types (`NodeArg.type`) -> WebNN data types."""


class OnnxRuntimeExecutable:
    """A graph lowered to ONNX with its InferenceSession, ready for repeated runs. The input
    dtypes, the output names and dtypes are worked out once; `run` hands a C-contiguous
    numpy array of the input's dtype to onnxruntime as it is (no copy; onnxruntime's CPU
    provider reads its buffer in place) and converts anything else. `run_exact` is the same
    for callers that already hold arrays of every input's dtype and shape
    (`converter.results.compiled`)."""

    def __init__(self, graph: MLGraph, session: Any, onnx_names: list[str],
                 device: str = "cpu") -> None:
        self.graph = graph
        self.session = session
        self._core = getattr(session, "_sess", None) if device == "cpu" else None
        """onnxruntime's C++ session under the Python `InferenceSession` on the CPU: its
        `run` skips the wrapper's checks of the feed names (the callers feed exactly the
        graph's inputs) and its fallback to other providers (the CPU has none); about 2 us
        a call less (benchmarks/runtime_zoo.py)."""
        self._onnx_names = onnx_names
        self._inputs = tuple((name, np.dtype(o.data_type)) for name, o in graph.inputs.items())
        self._outputs = tuple((name, np.dtype(o.data_type)) for name, o in graph.outputs.items())
        self._output_names = tuple(graph.outputs)
        declared = {o.name: _ORT_TYPES.get(o.type) for o in session.get_outputs()}
        self._exact_outputs = all(declared.get(onnx) == o.data_type for onnx, o in
                                  zip(onnx_names, graph.outputs.values(), strict=True))
        """Whether onnxruntime gives every output in the graph's type (no conversion)."""

    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.run_exact({name: np.asarray(inputs[name], dtype=dtype, order="C")
                               for name, dtype in self._inputs})

    def run_exact(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """`run` for `feeds` that are numpy arrays of exactly the graph's input names, dtypes
        and shapes (a strided one is copied by onnxruntime itself)."""
        try:
            if self._core is not None:
                results = self._core.run(self._onnx_names, feeds, None)
            else:
                results = self.session.run(self._onnx_names, feeds)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise MLOperationError("onnxruntime could not run the exported graph: "
                                   f"{exception_text(exc)}") from exc
        if self._exact_outputs:
            return dict(zip(self._output_names, results, strict=True))
        return {name: np.asarray(r, dtype=dtype)
                for (name, dtype), r in zip(self._outputs, results, strict=True)}


class OnnxRuntimeBackend:
    """Backend object registered as "onnxruntime"."""

    name = "onnxruntime"
    preferred_input_layout = "nchw"

    def __init__(self, device: str, threads: int | None = None, opset: int = 21) -> None:
        import onnxruntime as ort

        if device not in _PROVIDERS:
            raise ValueError(f"the onnxruntime backend runs on 'cpu' or 'cuda', not {device!r}")
        available = ort.get_available_providers()
        if _PROVIDERS[device][0] not in available:
            raise ValueError(f"onnxruntime backend: device {device!r} needs "
                             f"{_PROVIDERS[device][0]}, which this onnxruntime build lacks "
                             f"(available: {', '.join(available)}); install onnxruntime-gpu "
                             "with a matching CUDA for 'cuda'")
        if threads is None:
            threads = DEFAULT_THREADS
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
            raise ValueError(f"onnxruntime backend: threads must be an integer >= 0, "
                             f"got {threads!r}")
        self.device = device
        self.threads = threads
        self.opset = opset
        self._ort = ort

    def lower(self, graph: MLGraph) -> Any:
        """The ONNX model (onnx.ModelProto) this backend runs for `graph`: com.microsoft
        re-fusions, float16 chains in float32 (see the module docstring)."""
        from converter.runtimes.onnxruntime.to_onnx import to_onnx

        return to_onnx(graph, opset=self.opset, contrib_ops=True, float16_chains=True)

    def compile(self, graph: MLGraph) -> OnnxRuntimeExecutable:
        from converter.runtimes.onnxruntime.to_onnx import onnx_output_names

        model = self.lower(graph)
        ort = self._ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 4  # fatal only: errors reach Python as exceptions
        # onnxruntime fuses DequantizeLinear(4-bit weight) + MatMul into MatMulNBits, by
        # default with accuracy level 4 (A quantized to int8: ~1% error); 0 keeps A's type
        options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
        try:
            session = ort.InferenceSession(model.SerializeToString(), options,
                                           providers=_PROVIDERS[self.device])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
            raise MLOperationError("onnxruntime could not load the exported graph: "
                                   f"{exception_text(exc)}") from exc
        return OnnxRuntimeExecutable(graph, session, onnx_output_names(graph), self.device)


def create_backend(device: str, **options: Any) -> OnnxRuntimeBackend:
    """The onnxruntime backend for `device` ("cpu" or "cuda") with the options `threads` and
    `opset` (ValueError for any other)."""
    unknown = sorted(set(options) - {"threads", "opset"})
    if unknown:
        raise ValueError(f"the onnxruntime backend takes the options threads and opset, got "
                         f"{unknown}")
    return OnnxRuntimeBackend(device, **options)

