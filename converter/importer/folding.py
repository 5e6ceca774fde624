"""Constant folding of nodes whose inputs are all constants (see "Constant folding" in
`converter.importer.loop`): a handler's numpy `fold` function, or a replay of the handler
on a scratch builder run on the reference backend."""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.core.webnn import ML, MLContext, MLGraphBuilder, MLOperand, MLOperationError
from converter.importer.context import ImportContext
from converter.importer.metering import shape_bytes
from converter.importer.op_handler import OpHandler


class Folder:
    """Folds nodes of one import: `ctx` is the import's context (its constants, warnings,
    settings, observer and meter), `shared` its conversion-wide handler state (the folding
    contexts share it)."""

    def __init__(self, ctx: ImportContext, shared: dict[type, Any]) -> None:
        self.ctx = ctx
        self.shared = shared
        self._context: MLContext | None = None

    def fold(self, node: Node, handler: OpHandler) -> list[Any] | None:
        """Evaluate `node` (every input a constant) with `handler`; None when it cannot be
        folded (e.g. no reference kernel), so the caller emits it normally. The values of a
        replay are checked against `max_constant_bytes` before they are computed."""
        ctx = self.ctx
        if callable(handler.fold):
            args = [ctx.consts[i] if i else None for i in node.inputs]
            folded = handler.fold(ctx, node, args)  # None: keep this node in the graph
            if folded is not NotImplemented:  # NotImplemented: fold by replaying the handler
                return None if folded is None else list(folded)
        if self._context is None:
            self._context = ML().create_context()
        builder = MLGraphBuilder(self._context)
        fctx = ImportContext(builder, ctx.consts, {}, warnings=ctx.warnings,
                             settings=ctx.settings, folding=True, observer=ctx.observer,
                             shared=self.shared)
        fctx.node = node
        results = list(handler.fn(fctx, node))
        values: list[Any] = [None] * len(results)
        to_run: dict[str, MLOperand] = {}
        for i, value in enumerate(results):
            if value is None:
                continue
            if isinstance(value, MLOperand):
                if value.kind == "constant":
                    values[i] = value.value
                else:
                    to_run[f"out{i}"] = value
            else:
                values[i] = np.asarray(value)
        if to_run:
            graph = builder.build(to_run)
            for op in graph.operations:  # every value the reference backend would compute
                for out in op.outputs:
                    ctx.meter.check_constant(shape_bytes(out.shape, out.data_type),
                                             f"the folded value ({op.op}) would take")
            try:
                computed = self._context.compute(graph, {})
            except (MLOperationError, NotImplementedError):
                return None
            for key, arr in computed.items():
                values[int(key[3:])] = arr
        return values
