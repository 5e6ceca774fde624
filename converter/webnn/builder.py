"""MLGraphBuilder: the core (input/constant/build) plus every operator family mixin."""

from __future__ import annotations

from converter.webnn.ops.conv import ConvOps
from converter.webnn.ops.elementwise import ElementwiseOps
from converter.webnn.ops.gather import GatherOps
from converter.webnn.ops.linalg import LinalgOps
from converter.webnn.ops.normalization import NormalizationOps
from converter.webnn.ops.pool import PoolOps
from converter.webnn.ops.quantize import QuantizeOps
from converter.webnn.ops.recurrent import RecurrentOps
from converter.webnn.ops.reduce import ReduceOps
from converter.webnn.ops.resample import ResampleOps
from converter.webnn.ops.shape import ShapeOps


class MLGraphBuilder(ElementwiseOps, ConvOps, PoolOps, ReduceOps, ShapeOps, GatherOps, LinalgOps,
                     NormalizationOps, RecurrentOps, QuantizeOps, ResampleOps):
    """Builds one WebNN graph. Methods are the spec's operators in snake_case, options are
    keyword arguments in snake_case with the spec's defaults; inside the graph, operator and
    option names are the spec's own (camelCase)."""
