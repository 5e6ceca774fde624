"""`TFLiteFrontEnd`: what only TFLite has, for the shared importer loop
(`converter.importer.FrontEnd`).

- Subgraphs: handlers of IF / WHILE / CALL_ONCE / STABLEHLO_COMPOSITE call
  `ctx.run_subgraph(index, bindings, tag)`, which converts subgraph `index` of the model
  inline in a fresh name scope (see `TFLiteFrontEnd.run_subgraph`).
- Operator structure: before its handler runs, an operator's input and output counts are
  checked against its op (`op_mappings.tflite._checks.io_problem`); a handler computing
  another number of outputs than the operator lists is an InvalidModel error.
- Wording: errors name TFLite operator versions ("version 2") and the TFLite handler
  folder in their hint.

TFLite has no function bodies (a node without a handler fails) and no bool tracking (its
bool tensors are typed in the file).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import ConversionError, InternalError, InvalidModel, UnsupportedOp
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.frontends.tflite.records import TFLiteModel, TFLiteSourceGraph
from converter.importer import Importer, Value, nested_error, readonly

_HINT = "add a handler in op_mappings/tflite/, or replace the op in the source model"


class TFLiteFrontEnd:
    """The TFLite part of one import (`converter.importer.FrontEnd`) of `source`: subgraph
    inlining, operator checks and TFLite wording in errors."""

    def __init__(self, source: TFLiteSourceGraph) -> None:
        self.model: TFLiteModel | None = source.model
        self.subgraph_constants: dict[tuple[int, str], MLOperand] = {}
        """(subgraph index, constant name) -> the builder constant made for it the first time
        that subgraph was inlined (one constant per weight however often it is inlined)."""

    def malformed(self, node: Node) -> ConversionError | None:
        """The operator's input/output counts against its op (`io_problem`)."""
        from op_mappings.tflite._checks import io_problem

        problem = io_problem(node)
        return None if problem is None else InvalidModel(problem)

    def fold_early(self, loop: Importer, node: Node) -> bool:
        """Nothing is folded before its handler runs."""
        return False

    def check_outputs(self, node: Node, results: Sequence[object]) -> None:
        """A TFLite operator lists exactly the outputs its op computes: a handler giving
        another number means the model lists too few or too many."""
        if len(results) != len(node.outputs):
            raise InvalidModel(f"the operator lists {len(node.outputs)} output(s), "
                               f"{node.op_type} computes {len(results)}")

    def track_bool(self, loop: Importer, node: Node) -> None:
        """TFLite tensors carry their bool type in the file: nothing to infer."""

    def has_body(self, loop: Importer, node: Node) -> bool:
        """TFLite ops have no bodies."""
        return False

    def inline(self, loop: Importer, node: Node) -> bool:
        """TFLite ops have no bodies: a node without a handler fails."""
        return False

    def recover(self, loop: Importer, node: Node, error: ConversionError) -> bool:
        """A failed TFLite operator has no other way to convert."""
        return False

    def word_error(self, error: ConversionError) -> None:
        """TFLite operator versions and the TFLite handler folder in the hint."""
        error.version_label = "version"
        if isinstance(error, UnsupportedOp) and error.hint == UnsupportedOp.default_hint:
            error.hint = _HINT

    def no_handler_message(self, node: Node) -> str:
        """Why no handler matched `node`: the version handlers exist from, Flex (TensorFlow)
        and other custom ops."""
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
    def run_subgraph(self, loop: Importer, graph: Any,
                     bindings: Sequence[Value | str | None], tag: str) -> list[Value]:
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
        node = loop.ctx.node
        model = self.model
        if node is None or model is None:
            raise InternalError("run_subgraph called outside a TFLite handler")
        index = int(graph)
        if not 0 <= index < len(model.subgraphs):
            raise InvalidModel(f"{node.op_type} refers to subgraph {index}, the model has "
                               f"{len(model.subgraphs)}")
        loop.check_nesting(node, "subgraphs (recursive control flow?)")
        sub = model.subgraphs[index]
        if len(bindings) != len(sub.inputs):
            raise InvalidModel(f"subgraph {index} ({sub.name!r}) takes {len(sub.inputs)} "
                               f"inputs, {node.op_type} passes {len(bindings)}")
        prefix = loop.scope_prefix(node, tag or f"subgraph{index}")

        def scoped(name: str) -> str:
            return prefix + name if name else ""

        for tidx, value in zip(sub.inputs, bindings, strict=True):
            name = scoped(sub.tensors[tidx].name)
            if value is None or isinstance(value, str):
                raise InternalError("TFLite subgraph inputs are bound to values, not names")
            if isinstance(value, MLOperand):
                loop.operands[name] = value
            else:
                loop.consts[name] = readonly(np.asarray(value))
        shared = self.subgraph_constants
        consts = model.constants[index]
        for cname, arr in consts.items():
            loop.consts[scoped(cname)] = arr
            if (index, cname) in shared:
                loop.operands[scoped(cname)] = shared[(index, cname)]
        nodes = [dataclasses.replace(n, name=scoped(n.name),
                                     inputs=tuple(scoped(i) for i in n.inputs),
                                     outputs=tuple(scoped(o) for o in n.outputs))
                 for n in sub.nodes]
        _, errors = loop.visit_nested(nodes)
        for cname in consts:
            operand = loop.operands.get(scoped(cname))
            if operand is not None:
                shared.setdefault((index, cname), operand)
        if errors:
            raise nested_error(errors, f"in subgraph {index} ({sub.name!r})")
        outs: list[Value] = []
        for tidx in sub.outputs:
            name = scoped(sub.tensors[tidx].name)
            if name in loop.poisoned or not loop.ctx.has(name):
                raise InvalidModel(f"subgraph {index} ({sub.name!r}) does not produce its "
                                   f"output {sub.tensors[tidx].name!r}")
            outs.append(loop.ctx.value(name))
        # the scope's names are never referenced again: drop them so that the importer's
        # bookkeeping stays proportional to the live values (loops unroll thousands of times)
        scoped_names = {scoped(t.name) for t in sub.tensors}
        for name in scoped_names:
            loop.operands.pop(name, None)
            loop.consts.pop(name, None)
        return outs
