"""DENSIFY: its input is a sparse constant that the reader already densified
(converter/frontends/tflite/sparsity.py), so the op folds to that constant at conversion
time."""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import RequiresConstantInput
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.asarray(values[0])]


@tflite_op("DENSIFY", since=1, fold=_fold)
def densify(ctx: ImportContext, node: Node) -> Outputs:
    """Pass-through of the densified constant."""
    if not ctx.is_constant(node.inputs[0]):
        raise RequiresConstantInput("DENSIFY input must be a sparse constant")
    return [np.asarray(ctx.const_value(node.inputs[0]))]
