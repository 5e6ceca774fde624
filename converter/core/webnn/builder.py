"""MLGraphBuilder: the core (input/constant/build) plus every operator family mixin."""

from __future__ import annotations

from converter.core.webnn.ops.conv import ConvOps
from converter.core.webnn.ops.elementwise import ElementwiseOps
from converter.core.webnn.ops.gather import GatherOps
from converter.core.webnn.ops.linalg import LinalgOps
from converter.core.webnn.ops.normalization import NormalizationOps
from converter.core.webnn.ops.pool import PoolOps
from converter.core.webnn.ops.quantize import QuantizeOps
from converter.core.webnn.ops.recurrent import RecurrentOps
from converter.core.webnn.ops.reduce import ReduceOps
from converter.core.webnn.ops.resample import ResampleOps
from converter.core.webnn.ops.shape import ShapeOps


class MLGraphBuilder(ElementwiseOps, ConvOps, PoolOps, ReduceOps, ShapeOps, GatherOps, LinalgOps,
                     NormalizationOps, RecurrentOps, QuantizeOps, ResampleOps):
    """Builds one WebNN graph. Methods are the spec's operators in snake_case, options are
    keyword arguments in snake_case with the spec's defaults; inside the graph, operator and
    option names are the spec's own (camelCase)."""
