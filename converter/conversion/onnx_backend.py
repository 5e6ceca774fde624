"""`onnx.backend.base.Backend` adapter: run ONNX models through the converter.

```python
from converter.conversion.onnx_backend import WebNNBackend
rep = WebNNBackend.prepare(model)                 # convert + compile
outputs = rep.run([x])                            # graph-output order, ONNX dtypes
```

- `prepare(model, device="CPU", backend="reference")` converts the model with
  `converter.convert` for the unrestricted graph (target "spec": a backend computes what the
  WebNN specification says, whatever a browser lacks) and returns a `WebNNBackendRep`; `run(inputs)` takes a list (graph-input
  order, initializers excluded) or a dict and returns a namedtuple of outputs in graph-output
  order, in the graph's declared ONNX dtypes (bool and float64 are converted back).
- `run_node(node, inputs)` wraps one node in a model (types from the given arrays, output
  types from ONNX shape inference) and runs it.
- Specialisation: WebNN graphs are static, so values that decide shapes (Reshape shape, Slice
  starts, TopK k, Loop trip counts, ...) must be known at conversion time. When the only
  conversion errors are `requires_constant_input`, `prepare` defers conversion: `run` pins
  the graph inputs those values depend on to the values it is given (`pin_inputs`) and
  converts then (cached per pinned values). `WebNNBackendRep.pinned` names the pinned inputs;
  pass `specialize=False` to `prepare` to turn this off.
- Devices: "CPU" (the reference numpy backend, or `backend=` any registered runtime). CUDA is
  not claimed (`supports_device("CUDA")` is False).

Restrictions: every input dimension must be static in the model (node-test models are);
inputs WebNN has no type for (strings, float64 is converted to float32 with a warning,
sequences, ...) fail at conversion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, namedtupledict

from converter.conversion.pipeline import convert
from converter.core.errors import ConversionFailed, RequiresConstantInput
from converter.passes.targets import SPEC_TARGET
from converter.results.result import ConversionResult

MAX_SPECIALISATIONS = 8
"""How many pinned-value variants one `WebNNBackendRep` keeps."""

MAX_PIN_ROUNDS = 4
"""How many times a specialising conversion may widen the set of pinned inputs."""


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in model.graph.initializer}
    inits |= {t.values.name for t in model.graph.sparse_initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def _ancestors(model: onnx.ModelProto, names: Sequence[str]) -> set[str]:
    """Graph inputs that the values `names` depend on (through the top-level graph, and
    through outer-scope references of subgraphs)."""
    producers: dict[str, onnx.NodeProto] = {}
    for node in model.graph.node:
        for o in node.output:
            producers[o] = node
    graph_inputs = {vi.name for vi in _graph_inputs(model)}
    seen: set[str] = set()
    found: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        if name in graph_inputs:
            found.add(name)
        node = producers.get(name)
        if node is None:
            continue
        stack.extend(node.input)
        stack.extend(_subgraph_refs(node))
    return found


def _subgraph_refs(node: onnx.NodeProto) -> list[str]:
    refs: list[str] = []
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
        for g in graphs:
            for n in g.node:
                refs.extend(n.input)
                refs.extend(_subgraph_refs(n))
    return refs


def _pins_for(model: onnx.ModelProto, failure: ConversionFailed) -> set[str] | None:
    """Graph inputs to pin so that the failed nodes may convert: for each error, the graph
    inputs behind the values its handler needed as constants (`value_name`,
    `constant_candidates`), else, for `requires_constant_input` errors whose values live in a
    subgraph or function body, the non-float graph inputs behind the failed node. Errors with
    nothing to pin are ignored (they may be consequences of the others: the caller retries
    and re-raises when pinning changes nothing); None when nothing at all can be pinned."""
    if not failure.errors:
        return None
    by_name = {n.name or f"{n.op_type}_{i}": n for i, n in enumerate(model.graph.node)}
    float_inputs = {vi.name for vi in _graph_inputs(model)
                    if vi.type.tensor_type.elem_type in (onnx.TensorProto.FLOAT,
                                                         onnx.TensorProto.FLOAT16,
                                                         onnx.TensorProto.DOUBLE)}
    pins: set[str] = set()
    for err in failure.errors:
        wanted = list(err.constant_candidates)
        if isinstance(err, RequiresConstantInput) and err.value_name:
            wanted.append(err.value_name)
        found = _ancestors(model, wanted) if wanted else set()
        if not found and isinstance(err, RequiresConstantInput) and err.node_name in by_name:
            node = by_name[err.node_name]
            found = _ancestors(model, list(node.input) + _subgraph_refs(node)) - float_inputs
        pins |= found
    return pins or None


class WebNNBackendRep(BackendRep):
    """A prepared model: the conversion result (or, when specialising, the model and the
    inputs to pin) and the runtime backend name."""

    def __init__(self, model: onnx.ModelProto, result: ConversionResult | None,
                 pinned: Sequence[str] = (), backend: str = "reference") -> None:
        self.model = model
        self.result = result
        self.pinned = tuple(pinned)
        self.backend = backend
        self.input_names = [vi.name for vi in _graph_inputs(model)]
        self.output_names = [vi.name for vi in model.graph.output]
        self._cache: dict[bytes, ConversionResult] = {}

    def _feeds(self, inputs: Any) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            return {k: np.asarray(v) for k, v in inputs.items()}
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        values = list(inputs)
        if len(values) > len(self.input_names):
            raise ValueError(f"{len(values)} inputs given, the model takes "
                             f"{len(self.input_names)}")
        return {n: np.asarray(v) for n, v in zip(self.input_names, values, strict=False)}

    def _specialised(self, feeds: Mapping[str, np.ndarray]) -> ConversionResult:
        pins = {n: feeds[n] for n in self.pinned}
        key = b"".join(n.encode() + b"\0" + str(v.dtype).encode() + repr(v.shape).encode() +
                       np.ascontiguousarray(v).tobytes() for n, v in sorted(pins.items()))
        result = self._cache.get(key)
        if result is None:
            result = self._convert_pinned(feeds)
            if len(self._cache) >= MAX_SPECIALISATIONS:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = result
        return result

    def _convert_pinned(self, feeds: Mapping[str, np.ndarray]) -> ConversionResult:
        """Convert with the pinned inputs; pin more when the conversion still needs other
        inputs (a node after the first blocked one), a few rounds at most."""
        for _ in range(MAX_PIN_ROUNDS):
            try:
                return convert(self.model, pin_inputs={n: feeds[n] for n in self.pinned},
                               target=SPEC_TARGET)
            except ConversionFailed as failure:
                more = _pins_for(self.model, failure)
                if not more or more <= set(self.pinned):
                    raise
                self.pinned = tuple(sorted(set(self.pinned) | more))
        return convert(self.model, pin_inputs={n: feeds[n] for n in self.pinned},
                       target=SPEC_TARGET)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Outputs in graph-output order and the graph's ONNX dtypes."""
        feeds = self._feeds(inputs)
        result = self.result if self.result is not None else self._specialised(feeds)
        used = {k: v for k, v in feeds.items() if k in set(result.input_names)}
        outputs = result.run(used, backend=self.backend)
        return namedtupledict("Outputs", self.output_names)(
            *[outputs[n] for n in self.output_names])


class WebNNBackend(Backend):
    """The converter as an ONNX backend (see the module docstring)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU",
                      **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU",
                **kwargs: Any) -> WebNNBackendRep:
        """Convert `model`; keyword `backend` picks the runtime ("reference"), `specialize`
        (default True) allows deferring conversion to pin shape-deciding inputs."""
        if not cls.supports_device(device):
            raise RuntimeError(f"device {device!r} is not supported (CPU only)")
        backend = kwargs.get("backend", "reference")
        try:
            result = convert(model, target=SPEC_TARGET)
        except ConversionFailed as failure:
            pins = _pins_for(model, failure) if kwargs.get("specialize", True) else None
            if not pins:
                raise
            return WebNNBackendRep(model, None, sorted(pins), backend)
        return WebNNBackendRep(model, result, (), backend)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[Any, Any]] | None = None,
                 **kwargs: Any) -> tuple[Any, ...]:
        """Run one node: a model is built around it with the input types of `inputs`."""
        values = list(inputs.values()) if isinstance(inputs, Mapping) else list(inputs)
        names = [n for n in node.input if n]
        vis = [helper.make_tensor_value_info(
            n, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype), list(np.asarray(v).shape))
            for n, v in zip(names, values, strict=False)]
        graph = helper.make_graph([node], "run_node", vis,
                                  [onnx.ValueInfoProto(name=o) for o in node.output if o])
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        domain = "" if node.domain in ("", "ai.onnx") else node.domain
        opsets = [helper.make_opsetid("", opset)]
        if domain:
            opsets.append(helper.make_opsetid(domain, 1))
        model = helper.make_model(graph, opset_imports=opsets)
        model = onnx.shape_inference.infer_shapes(model)
        feeds = dict(zip(names, values, strict=False))
        return cls.prepare(model, device, **kwargs).run(feeds)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return str(device).upper().split(":")[0] == "CPU"


prepare = WebNNBackend.prepare
run_model = WebNNBackend.run_model
run_node = WebNNBackend.run_node
supports_device = WebNNBackend.supports_device
