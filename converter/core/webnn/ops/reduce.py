"""MLGraphBuilder operators: reductions, argMin/argMax, cumulativeSum and softmax.

Restrictions (spec):
- Reductions (`reduceL1` ... `reduceSumSquare`): `axes` absent means every axis; otherwise the
  axes must be unique and < rank. `axes=[]` reduces nothing but still applies the per-element
  function (|x|, x², log, exp+log, ...). The graph always stores the resolved axes list.
  A scalar input gives a scalar output.
- argMin/argMax: rank >= 1, `axis` < rank, `outputDataType` int32 or int64 and large enough to
  index `shape[axis]`. Ties resolve to the first (lowest) index, as ONNX does.
- cumulativeSum: rank >= 1, `axis` < rank.
- softmax: rank >= 1, `axis` (required) < rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.dtypes import DATA_TYPES
from converter.core.webnn.operand import MLOperand

ARG_OUTPUT_TYPES = ("int32", "int64")


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keep_dimensions: bool
                  ) -> tuple[int, ...]:
    """The spec's "calculate reduction output sizes": reduced axes become 1 or disappear."""
    reduced = set(axes)
    if keep_dimensions:
        return tuple(1 if i in reduced else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in reduced)


class ReduceOps(BuilderBase):
    # -- helpers ---------------------------------------------------------------------------
    def _reduce_op(self, op: str, input: Any, axes: Sequence[int] | None, keep_dimensions: Any,
                label: str) -> MLOperand:
        x = self._operand(op, "input", input)
        resolved = list(range(x.rank)) if axes is None else list(v.axes(op, "axes", axes, x.rank))
        keep = v.boolean(op, "keepDimensions", keep_dimensions)
        return self._emit1(op, (x,), {"axes": resolved, "keepDimensions": keep,
                                      "label": label or None},
                           x.data_type, reduced_shape(x.shape, resolved, keep))

    def _arg_min_max(self, op: str, input: Any, axis: Any, keep_dimensions: Any,
                     output_data_type: Any, label: str) -> MLOperand:
        x = self._operand(op, "input", input)
        a = v.axis(op, "axis", axis, x.rank)
        keep = v.boolean(op, "keepDimensions", keep_dimensions)
        out_type = v.enum(op, "outputDataType", output_data_type, DATA_TYPES)
        if out_type not in ARG_OUTPUT_TYPES:
            raise v.fail(op, f"outputDataType {out_type} is not one of int32, int64")
        limit = int(np.iinfo(np.dtype(out_type)).max)
        if x.shape[a] > limit:
            raise v.fail(op, f"input dimension {x.shape[a]} along axis {a} cannot be indexed "
                             f"by outputDataType {out_type} (max {limit})")
        return self._emit1(op, (x, a), {"keepDimensions": keep, "outputDataType": out_type,
                                        "label": label or None},
                           out_type, reduced_shape(x.shape, [a], keep))

    # -- reductions ------------------------------------------------------------------------
    def reduce_l1(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                  keep_dimensions: bool = False, label: str = "") -> MLOperand:
        """sum(|x|) over `axes`."""
        return self._reduce_op("reduceL1", input, axes, keep_dimensions, label)

    def reduce_l2(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                  keep_dimensions: bool = False, label: str = "") -> MLOperand:
        """sqrt(sum(x²)) over `axes` (float types only)."""
        return self._reduce_op("reduceL2", input, axes, keep_dimensions, label)

    def reduce_log_sum(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                       keep_dimensions: bool = False, label: str = "") -> MLOperand:
        """log(sum(x)) over `axes` (float types only)."""
        return self._reduce_op("reduceLogSum", input, axes, keep_dimensions, label)

    def reduce_log_sum_exp(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                           keep_dimensions: bool = False, label: str = "") -> MLOperand:
        """log(sum(exp(x))) over `axes` (float types only)."""
        return self._reduce_op("reduceLogSumExp", input, axes, keep_dimensions, label)

    def reduce_max(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                   keep_dimensions: bool = False, label: str = "") -> MLOperand:
        return self._reduce_op("reduceMax", input, axes, keep_dimensions, label)

    def reduce_mean(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                    keep_dimensions: bool = False, label: str = "") -> MLOperand:
        """sum(x) / count over `axes` (float types only)."""
        return self._reduce_op("reduceMean", input, axes, keep_dimensions, label)

    def reduce_min(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                   keep_dimensions: bool = False, label: str = "") -> MLOperand:
        return self._reduce_op("reduceMin", input, axes, keep_dimensions, label)

    def reduce_product(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                       keep_dimensions: bool = False, label: str = "") -> MLOperand:
        return self._reduce_op("reduceProduct", input, axes, keep_dimensions, label)

    def reduce_sum(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                   keep_dimensions: bool = False, label: str = "") -> MLOperand:
        return self._reduce_op("reduceSum", input, axes, keep_dimensions, label)

    def reduce_sum_square(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                          keep_dimensions: bool = False, label: str = "") -> MLOperand:
        """sum(x²) over `axes`."""
        return self._reduce_op("reduceSumSquare", input, axes, keep_dimensions, label)

    # -- argMin / argMax -------------------------------------------------------------------
    def arg_min(self, input: MLOperand, axis: int, *, keep_dimensions: bool = False,
                output_data_type: str = "int32", label: str = "") -> MLOperand:
        """Index of the smallest value along `axis`; ties give the first index."""
        return self._arg_min_max("argMin", input, axis, keep_dimensions, output_data_type,
                                 label)

    def arg_max(self, input: MLOperand, axis: int, *, keep_dimensions: bool = False,
                output_data_type: str = "int32", label: str = "") -> MLOperand:
        """Index of the largest value along `axis`; ties give the first index."""
        return self._arg_min_max("argMax", input, axis, keep_dimensions, output_data_type,
                                 label)

    # -- cumulativeSum, softmax ------------------------------------------------------------
    def cumulative_sum(self, input: MLOperand, axis: int, *, exclusive: bool = False,
                       reversed: bool = False, label: str = "") -> MLOperand:
        """Running sum along `axis`; `exclusive` leaves out the current element, `reversed`
        sums from the end."""
        op = "cumulativeSum"
        x = self._operand(op, "input", input)
        a = v.axis(op, "axis", axis, x.rank)
        return self._emit1(op, (x, a), {"exclusive": v.boolean(op, "exclusive", exclusive),
                                        "reversed": v.boolean(op, "reversed", reversed),
                                        "label": label or None}, x.data_type, x.shape)

    def softmax(self, input: MLOperand, axis: int, *, label: str = "") -> MLOperand:
        """exp(x - max) / sum(exp(x - max)) along `axis`."""
        x = self._operand("softmax", "input", input)
        a = v.axis("softmax", "axis", axis, x.rank)
        return self._emit1("softmax", (x, a), {"label": label or None}, x.data_type, x.shape)
