"""MLGraph: the immutable result of MLGraphBuilder.build()."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from converter.core.webnn.errors import MLInvalidStateError
from converter.core.webnn.operand import MLOperand, MLOperandDescriptor, Operation

if TYPE_CHECKING:
    from converter.core.webnn.context import MLContext


@dataclass(frozen=True, eq=False)
class MLGraph:
    """A built graph: only what the outputs reach.

    `inputs` maps each reachable input name to its operand, `constants` lists the reachable
    constant operands, `operations` the reachable operations in topological order, `outputs`
    maps output names to operands. Backends cache compiled forms in `_compiled`.

    `narrowed_inputs` / `narrowed_outputs` name the inputs and outputs whose values callers
    hold in a wider integer type than the graph's (name -> that type, e.g. "int64" for an
    int32 input that `converter.passes.targets` narrowed for a target without int64): feeds and the
    generated JavaScript convert such inputs with a range check, and such outputs back.
    """

    context: MLContext = field(repr=False)
    inputs: dict[str, MLOperand]
    constants: tuple[MLOperand, ...]
    operations: tuple[Operation, ...]
    outputs: dict[str, MLOperand]
    narrowed_inputs: dict[str, str] = field(default_factory=dict)
    narrowed_outputs: dict[str, str] = field(default_factory=dict)
    _compiled: dict[str, Any] = field(default_factory=dict, repr=False)
    _state: dict[str, bool] = field(default_factory=lambda: {"destroyed": False}, repr=False)

    @property
    def input_descriptors(self) -> dict[str, MLOperandDescriptor]:
        return {name: op.descriptor for name, op in self.inputs.items()}

    @property
    def output_descriptors(self) -> dict[str, MLOperandDescriptor]:
        return {name: op.descriptor for name, op in self.outputs.items()}

    @property
    def destroyed(self) -> bool:
        return self._state["destroyed"]

    def destroy(self) -> None:
        """Release the graph; later dispatches raise MLInvalidStateError."""
        self._state["destroyed"] = True
        self._compiled.clear()

    def check_usable(self) -> None:
        if self.destroyed:
            raise MLInvalidStateError("dispatch: the graph has been destroyed")
