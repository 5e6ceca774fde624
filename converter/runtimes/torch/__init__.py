"""The "torch" backend: WebNN graphs executed with PyTorch on the CPU or a CUDA device.

A graph is compiled once into a flat list of bound calls (one per operation, built by the
`ops_*` modules at compile time); constants are converted to device tensors at compile time.
`run()` converts the numpy inputs to device tensors, executes the calls under
`torch.inference_mode()` and returns numpy arrays with the WebNN data types and shapes
(never aliasing inputs, constants or each other).

Factory options (`get_backend("torch", device, **options)` or
`ML().create_context(backend="torch", device=..., ...)`):
- `device`: "cpu" or "cuda" (or "cuda:N").
- `threads`: intra-op thread count used while a graph runs (default: torch's setting).
- `compile`: run the call list through `torch.compile` (default False; True uses torch's
  default "inductor" compiler, which needs a C++ toolchain and takes tens of seconds per
  graph; a string names another `torch.compile` backend, e.g. "eager" or "aot_eager").
- `cuda_graphs`: on CUDA, run the first call eagerly, then capture the whole graph into a
  CUDA graph at the second call and replay it from then on (default: on for CUDA, off on the
  CPU, where True is an error; False keeps every call eager). A one-shot run pays nothing for
  it; repeated runs of a small graph skip the per-kernel launch cost (a 2-layer transformer
  encoder on an H200: 1.63x native torch's time eager, 0.35x replayed; see
  benchmarks/runtime_zoo.py). Falls back to eager execution with a warning if capture fails.
  The captured graph runs the eager call list (`compile` is not applied under
  `cuda_graphs`). A graph that cannot be captured (a few integer, gather and cumulative ops
  on some devices) runs eagerly: silently by default, with a RuntimeWarning when
  `cuda_graphs=True` was asked for.

Numerics: float32 computes in float32 (TF32 is disabled while a graph runs), float16 natively
on CUDA and in float32 rounded to float16 after every op on the CPU; integer ops are exact
with wrap-around (see `registry` for how uint32/uint64 are stored). Results therefore match
the float64 reference backend to within a few ULP, not bit for bit.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.webnn.context import Backend

try:
    import torch
except ImportError:  # pragma: no cover - exercised only without torch installed
    torch = None

_OP_MODULES = ("conv", "elementwise", "gather", "linalg", "normalization", "pool", "quantize",
               "recurrent", "reduce", "resample", "shape")


def _load_ops() -> dict[str, Any]:
    from converter.runtimes.torch.registry import IMPLS

    for name in _OP_MODULES:
        importlib.import_module(f"{__name__}.ops_{name}")
    return IMPLS


if torch is not None:
    from converter.core.webnn.context import MLGraph
    from converter.core.webnn.errors import MLOperationError
    from converter.runtimes.torch.registry import STORAGE, Ctx, Node, to_storage

    IMPLS = _load_ops()

    Step = tuple[Callable[..., Sequence["torch.Tensor"]], tuple[int, ...], tuple[int, ...],
                 tuple[str, ...], bool]

    def _to_tensor(arr: np.ndarray, data_type: str, device: torch.device) -> torch.Tensor:
        """A numpy array of `data_type` as a device tensor of its storage dtype."""
        if not (arr.flags.c_contiguous and arr.flags.writeable):
            arr = np.array(arr, order="C")  # torch tensors need writable memory
        if data_type == "uint64":
            arr = arr.view(np.int64)
        elif data_type == "uint32":
            arr = arr.astype(np.int64)
        t = torch.from_numpy(arr)
        return t.to(device) if device.type != "cpu" else t

    def _to_numpy(t: torch.Tensor, data_type: str, copy: bool) -> np.ndarray:
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
            copy = False
        t = t.contiguous() if not copy else t.clone(memory_format=torch.contiguous_format)
        arr: np.ndarray = t.numpy()
        if data_type == "uint64":
            return arr.view(np.uint64)
        if data_type == "uint32":
            return arr.astype(np.uint32)
        return arr

    def _storage_ptr(t: torch.Tensor) -> int:
        ptr: int = t.untyped_storage().data_ptr()
        return ptr

    @contextlib.contextmanager
    def _precision(threads: int | None, cuda: bool) -> Iterator[None]:
        """Inference mode, the requested thread count and, on CUDA, full float32 precision
        (no TF32) and float16 matmuls without reduced-precision reductions; all restored
        afterwards."""
        old_threads = torch.get_num_threads()
        if threads is not None and threads != old_threads:
            torch.set_num_threads(threads)
        flags = ((torch.backends.cuda.matmul, "allow_tf32", False),
                 (torch.backends.cudnn, "allow_tf32", False),
                 (torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", False))
        saved = [(obj, name, getattr(obj, name)) for obj, name, _ in flags] if cuda else []
        for obj, name, value in flags if cuda else ():
            setattr(obj, name, value)
        try:
            with torch.inference_mode():
                yield
        finally:
            for obj, name, value in saved:
                setattr(obj, name, value)
            if threads is not None and threads != old_threads:
                torch.set_num_threads(old_threads)

    class TorchExecutable:
        """A graph compiled to a list of bound torch calls, ready for repeated runs."""

        def __init__(self, graph: MLGraph, backend: TorchBackend) -> None:
            missing = sorted({op.op for op in graph.operations if op.op not in IMPLS})
            if missing:
                raise MLOperationError(f"torch backend has no implementation for "
                                       f"{', '.join(missing)}")
            self.graph = graph
            self.device = backend.device
            self.threads = backend.threads
            ctx = Ctx(self.device, native_half=self.device.type == "cuda")
            slots: dict[int, int] = {}

            def slot(operand: Any) -> int:
                return slots.setdefault(id(operand), len(slots))

            self._inputs = [(name, slot(o), o.data_type) for name, o in graph.inputs.items()]
            constants: dict[int, torch.Tensor] = {}
            with torch.inference_mode():
                for operand in graph.constants:
                    t = _to_tensor(np.asarray(operand.value), operand.data_type, self.device)
                    if self.device.type == "cpu":
                        t = t.clone()  # never share memory with the builder's array
                    constants[slot(operand)] = t
                    ctx.constants[id(operand)] = t
                steps: list[Step] = []
                for op in graph.operations:
                    node = Node(op, ctx)
                    reg = IMPLS[op.op]
                    try:
                        fn = reg.builder(node)
                    except MLOperationError:
                        raise
                    except Exception as exc:
                        raise MLOperationError(f"torch backend: cannot compile {op.op}: "
                                               f"{exc}") from exc
                    ins = tuple(slot(o) for o in node.operands)
                    outs = tuple(slot(o) for o in op.outputs)
                    types = tuple(o.data_type for o in op.outputs)
                    steps.append((fn, ins, outs, types, reg.moves))
            self._steps = steps
            self._constants = constants
            self._size = len(slots)
            self._outputs = [(name, slot(o), o.data_type, o.shape)
                             for name, o in graph.outputs.items()]
            self._constant_ptrs = {_storage_ptr(t) for t in constants.values()}
            self._checked = False
            self._execute: Callable[[list[Any]], list[Any]] = self._eager
            if backend.use_compile is True:
                self._execute = torch.compile(self._eager, dynamic=False)
            elif backend.use_compile:
                self._execute = torch.compile(self._eager, dynamic=False,
                                              backend=backend.use_compile)
            self._graph_runner: _CudaGraphRunner | None = None
            self._use_cuda_graph = backend.cuda_graphs and self.device.type == "cuda"
            self._warn_capture = backend.cuda_graphs_asked

        def _eager(self, env: list[Any]) -> list[Any]:
            for fn, ins, outs, types, moves in self._steps:
                results = fn(*[env[i] for i in ins])
                if moves:
                    for s, r in zip(outs, results, strict=True):
                        env[s] = r
                else:
                    for s, r, dt in zip(outs, results, types, strict=True):
                        env[s] = to_storage(r, dt)
            return [env[s] for _, s, _, _ in self._outputs]

        def _check(self, results: list[torch.Tensor]) -> None:
            for (name, _, dt, shape), t in zip(self._outputs, results, strict=True):
                if tuple(t.shape) != tuple(shape) or t.dtype != STORAGE[dt]:
                    raise MLOperationError(f"torch backend produced {t.dtype}"
                                           f"{list(t.shape)} for output {name!r}, expected "
                                           f"{dt}{list(shape)}")

        def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            with _precision(self.threads, self.device.type == "cuda"):
                feeds = [(s, _to_tensor(inputs[name], dt, self.device))
                         for name, s, dt in self._inputs]
                if self._use_cuda_graph and self._checked:  # the first call runs eagerly
                    results = self._run_cuda_graph(feeds)
                else:
                    env: list[Any] = [None] * self._size
                    for s, t in self._constants.items():
                        env[s] = t
                    for s, t in feeds:
                        env[s] = t
                    try:
                        results = self._execute(env)
                    except MLOperationError:
                        raise
                    except RuntimeError as exc:
                        raise MLOperationError(f"torch backend: {exc}") from exc
                if not self._checked:
                    self._check(results)
                    self._checked = True
                # Outputs sharing memory with inputs, constants or each other are copied.
                taken = self._constant_ptrs | {_storage_ptr(t) for _, t in feeds}
                out = {}
                for (name, _, dt, _), t in zip(self._outputs, results, strict=True):
                    ptr = _storage_ptr(t)
                    out[name] = _to_numpy(t, dt, copy=ptr in taken)
                    taken.add(ptr)
                return out

        def _run_cuda_graph(self, feeds: list[tuple[int, torch.Tensor]]) -> list[torch.Tensor]:
            if self._graph_runner is None:
                try:
                    self._graph_runner = _CudaGraphRunner(self, feeds)
                except Exception as exc:  # capture is not possible for this graph
                    if self._warn_capture:  # the default falls back silently
                        warnings.warn(f"torch backend: CUDA graph capture failed ({exc}); "
                                      "running eagerly", RuntimeWarning, stacklevel=3)
                    self._use_cuda_graph = False
                    env: list[Any] = [None] * self._size
                    for s, t in [*self._constants.items(), *feeds]:
                        env[s] = t
                    return self._eager(env)
            # Static outputs are overwritten by the next replay; run() copies them to
            # host memory before that.
            return list(self._graph_runner.replay(feeds))

    class _CudaGraphRunner:
        """Static input buffers, one captured CUDA graph and its static outputs."""

        def __init__(self, exe: TorchExecutable, feeds: list[tuple[int, torch.Tensor]]) -> None:
            self.static = {s: t.clone() for s, t in feeds}
            env: list[Any] = [None] * exe._size
            for s, t in [*exe._constants.items(), *self.static.items()]:
                env[s] = t
            new_stream: Callable[[], torch.cuda.Stream] = torch.cuda.Stream  # untyped __new__
            stream = new_stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(2):  # warm up (lazy initialisations happen outside capture)
                    exe._eager(list(env))
            torch.cuda.current_stream().wait_stream(stream)
            self.graph = torch.cuda.CUDAGraph()
            with warnings.catch_warnings():  # a graph of views only captures no kernel
                warnings.filterwarnings("ignore", "The CUDA Graph is empty")
                with torch.cuda.graph(self.graph):
                    self.outputs = exe._eager(list(env))

        def replay(self, feeds: list[tuple[int, torch.Tensor]]) -> list[torch.Tensor]:
            for s, t in feeds:
                self.static[s].copy_(t)
            self.graph.replay()
            return self.outputs

    class TorchBackend:
        """Backend object registered as "torch"."""

        name = "torch"
        preferred_input_layout = "nchw"

        def __init__(self, device: str = "cpu", threads: int | None = None,
                     compile: bool | str = False, cuda_graphs: bool | None = None) -> None:
            if not isinstance(device, str) or not (device == "cpu" or device == "cuda"
                                                   or device.startswith("cuda:")):
                raise ValueError(f"the torch backend runs on 'cpu' or 'cuda', not {device!r}")
            if device.startswith("cuda") and not torch.cuda.is_available():
                raise ValueError("torch backend: device 'cuda' requested but "
                                 "torch.cuda.is_available() is False")
            if threads is not None and (not isinstance(threads, int)
                                        or isinstance(threads, bool) or threads < 1):
                raise ValueError(f"torch backend: threads must be an integer >= 1, "
                                 f"got {threads!r}")
            if cuda_graphs and not device.startswith("cuda"):
                raise ValueError("torch backend: cuda_graphs=True needs device 'cuda'")
            self.device = torch.device(device)
            self.threads = threads
            if not isinstance(compile, (bool, str)) or compile == "":
                raise ValueError(f"torch backend: compile must be a bool or a torch.compile "
                                 f"backend name, got {compile!r}")
            self.use_compile: bool | str = compile
            self.cuda_graphs = (device.startswith("cuda") and not self.use_compile
                                if cuda_graphs is None else bool(cuda_graphs))
            self.cuda_graphs_asked = bool(cuda_graphs)  # True given: a failed capture warns
            # A backend name per configuration, so compiled graphs are cached separately.
            if self.use_compile or self.cuda_graphs or device != "cpu":
                self.name = (f"torch:{device}" + (f":compile={self.use_compile}" if self.use_compile else "")
                             + (":cuda_graphs" if self.cuda_graphs else ""))

        def compile(self, graph: MLGraph) -> TorchExecutable:
            """The Backend protocol's compile (the `compile` option is `use_compile`)."""
            return TorchExecutable(graph, self)


def create_backend(device: str = "cpu", **options: Any) -> Backend:
    """The torch backend for `device` with the factory options of the module docstring;
    ValueError without PyTorch or for an unknown option."""
    if torch is None:
        from converter.core.install import install_hint

        raise ValueError(f"the torch backend needs PyTorch: {install_hint('torch')}")
    unknown = sorted(set(options) - {"threads", "compile", "cuda_graphs"})
    if unknown:
        raise ValueError(f"the torch backend takes threads, compile and cuda_graphs, "
                         f"got {unknown}")
    return TorchBackend(device, **options)

