"""`convert_tflite()`: a `.tflite` model -> a WebNN `MLGraph` plus a conversion report.

```python
from converter.frontends.tflite.importer import convert_tflite
result = convert_tflite("model.tflite")                 # main subgraph, tensor names
result = convert_tflite("model.tflite", signature="serving_default")  # signature aliases
outputs = result.run({"serving_default_x:0": image})
```

Inputs/outputs are keyed by the tensor names LiteRT's `get_input_details()` /
`get_output_details()` report, or by the SignatureDef aliases when `signature` is given; the
order is the subgraph's. int8/uint8 quantized graph inputs and outputs stay int8/uint8.

Control flow is resolved at conversion time: WHILE loops whose condition folds to a constant
are unrolled (at most `max_while_iterations`, default 4096, iterations), IF with a constant
condition is inlined (otherwise both branches are converted and selected with `where`),
CALL_ONCE init subgraphs run once and resource variables (VAR_HANDLE / READ_VARIABLE /
ASSIGN_VARIABLE) hold their values for one invocation; STABLEHLO_COMPOSITE inlines its
decomposition subgraph.

Restrictions: dynamic (-1) input dimensions are converted at their stored size unless
`input_dims` / `input_shapes` set them (see `reader`); loops whose
trip count depends on graph inputs, and dynamic-shape builtins are not supported (see
op_mappings/tflite/); variable updates are not carried across invocations.
`fold_fp16=True` folds float16 weights behind DEQUANTIZE into float32 constants instead of
keeping float16 constants and a cast.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.budgets import Budgets, using
from converter.core.errors import (
    BudgetExceeded,
    ConversionError,
    InternalError,
    InvalidModel,
    UnsupportedOp,
)
from converter.core.ir import Node
from converter.core.webnn import MLContext, MLOperand
from converter.frontends.tflite.reader import (
    TFLiteModel,
    TFLiteNode,
    TFLiteSourceGraph,
    read_tflite,
)
from converter.frontends.tflite.sizing import size_tflite
from converter.importer import Importer, ImportObserver, nested_error
from converter.results.result import ConversionResult

_HINT = "add a handler in op_mappings/tflite/, or replace the op in the source model"


class TFLiteImporter(Importer):
    """The shared importer loop with TFLite subgraph inlining and TFLite wording in errors.

    `settings` (handlers' `ctx.settings`: `fold_fp16`, `max_while_iterations`) default to
    those the source was read with."""

    def __init__(self, source: TFLiteSourceGraph, lookup: Callable[[str, str, int], Any],
                 context: MLContext | None = None, *,
                 settings: Mapping[str, Any] | None = None,
                 observer: ImportObserver | None = None,
                 budgets: Budgets | None = None) -> None:
        super().__init__(source, lookup, context,
                         settings=read_settings(source) if settings is None else settings,
                         observer=observer, budgets=budgets)
        self.model: TFLiteModel | None = source.model
        self.subgraph_constants: dict[tuple[int, str], MLOperand] = {}
        """(subgraph index, constant name) -> the builder constant made for it the first time
        that subgraph was inlined (one constant per weight however often it is inlined)."""

    def no_handler_message(self, node: Node) -> str:
        from op_mappings.tflite import handlers

        sinces = sorted(h.since for h in handlers()
                        if h.op_type == node.op_type and h.domain == node.domain)
        if sinces:
            return (f"no handler for version {node.version} (handlers exist from version "
                    f"{sinces[0]})")
        if node.domain == "custom" and node.op_type.startswith("Flex"):
            return (f"no handler for custom op {node.op_type!r}: a TensorFlow (Flex / select TF "
                    f"ops) kernel {node.op_type[4:]!r}, which only runs with the TensorFlow "
                    "runtime")
        if node.domain == "custom":
            return f"no handler for custom op {node.op_type!r}"
        return f"no handler for builtin {node.op_type}"

    # -- subgraphs (IF / WHILE / CALL_ONCE / STABLEHLO_COMPOSITE) -------------------------
    def run_subgraph(self, graph: Any, bindings: Sequence[np.ndarray | MLOperand | str | None],
                     tag: str = "") -> list[np.ndarray | MLOperand]:
        """Convert subgraph `graph` (a subgraph index) of the model inline, its i-th input
        bound to `bindings[i]` (a numpy constant or an operand), and return its outputs
        (numpy arrays for values known at conversion time, operands otherwise); handlers call
        it as `ctx.run_subgraph(index, bindings, tag)`.

        The subgraph's tensors get a fresh name scope per call; its constants are shared
        between calls (one builder constant per weight however often the subgraph is
        inlined). Nodes inside are folded like any other node, which is what makes WHILE
        trip counts and IF conditions known. Errors of inner nodes are raised as one
        ConversionError naming the first failed inner node. Nesting is bounded by
        the `max_nesting` budget. The scope's value names are dropped afterwards.
        """
        node = self.ctx.node
        model = self.model
        if node is None or model is None:
            raise InternalError("run_subgraph called outside a TFLite handler")
        index = int(graph)
        if not 0 <= index < len(model.subgraphs):
            raise InvalidModel(f"{node.op_type} refers to subgraph {index}, the model has "
                               f"{len(model.subgraphs)}")
        self.check_nesting(node, "subgraphs (recursive control flow?)")
        sub = model.subgraphs[index]
        if len(bindings) != len(sub.inputs):
            raise InvalidModel(f"subgraph {index} ({sub.name!r}) takes {len(sub.inputs)} "
                               f"inputs, {node.op_type} passes {len(bindings)}")
        prefix = self._scope_prefix(node, tag or f"subgraph{index}")

        def scoped(name: str) -> str:
            return prefix + name if name else ""

        for tidx, value in zip(sub.inputs, bindings, strict=True):
            name = scoped(sub.tensors[tidx].name)
            if value is None or isinstance(value, str):
                raise InternalError("TFLite subgraph inputs are bound to values, not names")
            if isinstance(value, MLOperand):
                self.operands[name] = value
            else:
                arr = np.asarray(value)
                if arr.flags.writeable:
                    arr.setflags(write=False)
                self.consts[name] = arr
        shared = self.subgraph_constants
        consts = model.constants[index]
        for cname, arr in consts.items():
            self.consts[scoped(cname)] = arr
            if (index, cname) in shared:
                self.operands[scoped(cname)] = shared[(index, cname)]
        nodes = [dataclasses.replace(n, name=scoped(n.name),
                                     inputs=tuple(scoped(i) for i in n.inputs),
                                     outputs=tuple(scoped(o) for o in n.outputs))
                 for n in sub.nodes]
        _, errors = self._visit_nested(nodes)
        for cname in consts:
            operand = self.operands.get(scoped(cname))
            if operand is not None:
                shared.setdefault((index, cname), operand)
        if errors:
            raise nested_error(errors, f"in subgraph {index} ({sub.name!r})")
        outs: list[np.ndarray | MLOperand] = []
        for tidx in sub.outputs:
            name = scoped(sub.tensors[tidx].name)
            if name in self.poisoned or not self.ctx.has(name):
                raise InvalidModel(f"subgraph {index} ({sub.name!r}) does not produce its "
                                   f"output {sub.tensors[tidx].name!r}")
            outs.append(self.ctx.value(name))
        # the scope's names are never referenced again: drop them so that the importer's
        # bookkeeping stays proportional to the live values (loops unroll thousands of times)
        scoped_names = {scoped(t.name) for t in sub.tensors}
        for name in scoped_names:
            self.operands.pop(name, None)
            self.consts.pop(name, None)
        return outs

    def _check_count(self, node: Node, results: Sequence[Any]) -> None:
        """A TFLite operator lists exactly the outputs its op computes: a handler giving
        another number means the model lists too few or too many."""
        if len(results) != len(node.outputs):
            raise InvalidModel(f"the operator lists {len(node.outputs)} output(s), "
                               f"{node.op_type} computes {len(results)}")

    def _convert(self, node: Node) -> None:
        from op_mappings.tflite._checks import io_problem

        problem = io_problem(node)
        if problem is not None and not any(i in self.poisoned for i in node.inputs if i):
            self.fail(node, InvalidModel(problem))
            return
        try:
            super()._convert(node)
        except BudgetExceeded as exc:  # stops the conversion without passing `fail`
            exc.version_label = "version"
            raise

    def fail(self, node: Node, error: ConversionError) -> None:
        error.version_label = "version"
        if isinstance(error, UnsupportedOp) and error.hint == UnsupportedOp.default_hint:
            error.hint = _HINT
        super().fail(node, error)


def read_settings(source: TFLiteSourceGraph) -> dict[str, Any]:
    """The conversion settings `source` was read with (`read_tflite(settings=...)`; the
    reader hands them to every node as `TFLiteNode.settings`), less the reader's own
    signature bookkeeping."""
    model = source.model
    subgraphs = model.subgraphs if model is not None else ()
    for nodes in (source.nodes, *(sub.nodes for sub in subgraphs)):
        for n in nodes:
            if isinstance(n, TFLiteNode):
                return {k: v for k, v in n.settings.items() if k != "signature_map"}
    return {}


def convert_tflite(model: str | os.PathLike[str] | bytes, signature: str | None = None,
                   input_shapes: Mapping[str, Sequence[int]] | None = None, *,
                   fold_fp16: bool = False, context: MLContext | None = None,
                   input_dims: Mapping[str, Mapping[int, int]] | None = None,
                   budgets: Budgets | None = None, **settings: Any) -> ConversionResult:
    """Convert a TFLite model (path or bytes) to a WebNN graph (`input_dims` and
    `input_shapes`: see `reader.read_tflite`) within `budgets` (`converter.core.budgets`, default
    the active ones; they also bound the reader's densified sparse tensors).

    Raises `InvalidModel` (unreadable model, unknown signature, unresolved dimensions) or
    `ConversionFailed` (one error listing every operator that could not be converted).
    """
    from op_mappings.tflite import lookup

    with using(budgets) as given, using(given.for_source(_model_bytes(model))) as active_budgets:
        source: TFLiteSourceGraph = read_tflite(
            model, signature=signature, input_shapes=input_shapes, input_dims=input_dims,
            settings={"fold_fp16": bool(fold_fp16), **settings})
        parsed = source.model
        size_tflite(source.nodes, parsed.subgraphs if parsed is not None else (),
                    parsed.label if parsed is not None else "model", active_budgets)
        result = TFLiteImporter(source, lookup, context, budgets=active_budgets).run()
    return ConversionResult(result.graph, result.report, result.inputs, result.outputs, source)


def _model_bytes(model: str | os.PathLike[str] | bytes) -> int:
    """The size of the model file or bytes (the base of the derived-constant budget:
    `converter.core.budgets.Budgets.for_source`)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return len(model)
    try:
        return os.stat(model).st_size
    except (OSError, TypeError, ValueError):
        return 0
