"""`HostRunner`: runs host steps (`converter.results.host_steps.HostSteps`, or anything of
that shape: `StepsLike`) with `onnx.reference.ReferenceEvaluator`, numpy's implementation of
the ONNX operators.

The ONNX model is built once per runner: the steps' nodes in order, their constants as
initializers, their inputs as graph inputs (typeless: the evaluator takes the arrays it is
given) and their outputs as graph outputs. `run(feeds)` takes {input name: array} (the
WebNN graph's boundary outputs and the model inputs the steps read) and returns {output name:
array} in the steps' output order.

GatherND, NonMaxSuppression, RoiAlign (avg) and ScatterElements run vectorized
(`converter.runtimes.host.fast_ops`, the same semantics: onnx's take minutes on a detector's
post-processing).

Restrictions: the semantics are those of onnx's reference implementation for the opset the
steps name (onnxruntime agrees on the ops host steps hold: NonZero, NonMaxSuppression,
Compress, Unique, TopK, Gather, Reshape, ... tested in tests/converter/conversion/
test_host_split.py); a feed is used as given, so its data type must be the source model's
(the converter puts Cast steps behind boundary values the graph narrows). An error of the
evaluator is re-raised as a one-line `InvalidModel` naming the host step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from converter.core.errors import InvalidModel


class NodeLike(Protocol):
    """One host node (`converter.results.host_steps.HostNode`)."""

    @property
    def name(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def domain(self) -> str: ...
    @property
    def inputs(self) -> tuple[str, ...]: ...
    @property
    def outputs(self) -> tuple[str, ...]: ...
    @property
    def attributes(self) -> Mapping[str, Any]: ...


class InputLike(Protocol):
    """One host input (`converter.results.host_steps.HostInput`)."""

    @property
    def name(self) -> str: ...


class StepsLike(Protocol):
    """Host steps (`converter.results.host_steps.HostSteps`)."""

    @property
    def nodes(self) -> Sequence[NodeLike]: ...
    @property
    def constants(self) -> Mapping[str, np.ndarray]: ...
    @property
    def inputs(self) -> Sequence[InputLike]: ...
    @property
    def outputs(self) -> Sequence[str]: ...
    @property
    def opsets(self) -> Mapping[str, int]: ...


class HostRunner:
    """`steps` as an ONNX model, evaluated by `onnx.reference.ReferenceEvaluator` (see the
    module docstring)."""

    def __init__(self, steps: StepsLike) -> None:
        from onnx.reference import ReferenceEvaluator

        from converter.runtimes.host.fast_ops import FAST_OPS

        self.input_names = tuple(i.name for i in steps.inputs)
        self.output_names = tuple(steps.outputs)
        self._evaluator = ReferenceEvaluator(onnx_model(steps), new_ops=FAST_OPS)

    def run(self, feeds: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """{output name: array} of the steps run on `feeds` (every input name, see the module
        docstring)."""
        missing = [n for n in self.input_names if n not in feeds]
        if missing:
            raise InvalidModel(f"host steps: no value for {', '.join(map(repr, missing))}")
        values = {n: np.asarray(feeds[n]) for n in self.input_names}
        try:
            results = self._evaluator.run(None, values)
        except Exception as exc:  # noqa: BLE001 - the evaluator raises assorted types
            text = str(exc).strip().splitlines()
            raise InvalidModel(f"host steps failed: {type(exc).__name__}: "
                               f"{text[0] if text else ''}"[:2000]) from None
        return {name: np.asarray(v) for name, v in zip(self.output_names, results,
                                                       strict=True)}


def onnx_model(steps: StepsLike) -> Any:
    """The `onnx.ModelProto` of `steps`: nodes in order, constants as initializers, inputs and
    outputs without types (the reference evaluator does not check them)."""
    from onnx import ModelProto, helper, numpy_helper

    nodes = _nodes(steps.nodes)
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in steps.constants.items()]
    graph = helper.make_graph(nodes, "host_steps",
                              [helper.make_empty_tensor_value_info(i.name)
                               for i in steps.inputs],
                              [helper.make_empty_tensor_value_info(o) for o in steps.outputs],
                              inits)
    model: ModelProto = helper.make_model(graph, opset_imports=[
        helper.make_opsetid(d, v) for d, v in steps.opsets.items()])
    return model


def _nodes(items: Sequence[NodeLike]) -> list[Any]:
    from onnx import helper

    nodes = []
    for n in items:
        node = helper.make_node(n.op, list(n.inputs), list(n.outputs), name=n.name,
                                domain=n.domain)
        node.attribute.extend(_attribute(k, v) for k, v in n.attributes.items())
        nodes.append(node)
    return nodes


def _attribute(key: str, value: Any) -> Any:
    from onnx import AttributeProto, helper, numpy_helper

    if hasattr(value, "nodes"):  # a subgraph (an If branch: `HostGraph`)
        graph = helper.make_graph(_nodes(value.nodes), key,
                                  [helper.make_empty_tensor_value_info(i)
                                   for i in value.inputs],
                                  [helper.make_empty_tensor_value_info(o)
                                   for o in value.outputs])
        return helper.make_attribute(key, graph)
    if isinstance(value, np.ndarray):
        return helper.make_attribute(key, numpy_helper.from_array(value))
    if isinstance(value, tuple):
        return helper.make_attribute(key, list(value), attr_type=None if value
                                     else AttributeProto.INTS)
    return helper.make_attribute(key, value)
