"""The importer's operands by value name (`OperandStore`) and which WebNN operations a node
added (`OperandStore.new_ops`, for the conversion report)."""

from __future__ import annotations

from collections.abc import Sequence

from converter.core.webnn import MLOperand


class OperandStore(dict[str, MLOperand]):
    """The importer's operands by value name. `stamps` numbers every operand stored under a
    name (by id; the builder keeps them alive) in the order they were first stored, and
    `mark()` is the next number: `new_ops` tells the operands of earlier nodes from a node's
    own by their stamps, without walking every value."""

    def __init__(self) -> None:
        super().__init__()
        self.stamps: dict[int, int] = {}

    def __setitem__(self, key: str, value: MLOperand) -> None:
        super().__setitem__(key, value)
        self.stamps.setdefault(id(value), len(self.stamps))

    def mark(self) -> int:
        """Where the operands stored from now on begin (`before` of `new_ops`)."""
        return len(self.stamps)

    def new_ops(self, produced: Sequence[MLOperand], before: int) -> list[str]:
        """Spec names of the operations (in creation order) that produced `produced` and
        that did not exist when `mark()` was `before`."""
        # stored before: by their stamps (constant time per operand; a set of the first
        # `before` values per node made long unrolled loops quadratic)
        new_ops: dict[int, str] = {}
        stack = [o for o in produced if o.kind == "output"]
        get = self.stamps.get
        while stack:
            o = stack.pop()
            operation = o.operator
            if operation is None or id(operation) in new_ops or get(id(o), before) < before:
                continue
            new_ops[id(operation)] = operation.op
            for d in operation.operand_tuple():
                if d.kind == "output" and get(id(d), before) >= before:
                    stack.append(d)
        return list(new_ops.values())[::-1]
