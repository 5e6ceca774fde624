"""MLGraphBuilder: the core (input/constant/build) plus every operator family mixin."""

from __future__ import annotations

from .ops.conv import ConvOps
from .ops.elementwise import ElementwiseOps
from .ops.gather import GatherOps
from .ops.linalg import LinalgOps
from .ops.normalization import NormalizationOps
from .ops.pool import PoolOps
from .ops.quantize import QuantizeOps
from .ops.recurrent import RecurrentOps
from .ops.reduce import ReduceOps
from .ops.resample import ResampleOps
from .ops.shape import ShapeOps


class MLGraphBuilder(ElementwiseOps, ConvOps, PoolOps, ReduceOps, ShapeOps, GatherOps, LinalgOps,
                     NormalizationOps, RecurrentOps, QuantizeOps, ResampleOps):
    """Builds one WebNN graph. Methods are the spec's operators in snake_case, options are
    keyword arguments in snake_case with the spec's defaults; inside the graph, operator and
    option names are the spec's own (camelCase)."""
