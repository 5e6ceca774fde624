"""MLGraphBuilder operators: batchNormalization, instanceNormalization, layerNormalization.

Restrictions (spec):
- Every operand is float32 or float16, and all operands share the input's data type.
- batchNormalization: input rank >= 1; `axis` < rank; mean, variance, scale and bias are 1-D of
  size `input.shape[axis]`.
- instanceNormalization: input rank exactly 4; `layout` "nchw" (channels on axis 1) or "nhwc"
  (axis 3); scale and bias are 1-D of size C.
- layerNormalization: `axes` default `[1, ..., rank-1]` (`[]` for rank <= 1), unique and < rank;
  scale and bias have shape `[input.shape[a] for a in axes]` in the order given.
- `epsilon` is a finite double, cast to the input data type when computing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.operand import MLOperand

LAYOUTS = ("nchw", "nhwc")


def _finite(op: str, what: str, value: Any) -> float:
    """A WebIDL `double` (not unrestricted): a finite number."""
    value = v.number(op, what, value)
    if not math.isfinite(value):
        raise v.fail(op, f"{what} must be a finite number, got {value}")
    return float(value)


class NormalizationOps(BuilderBase):
    def _norm_param(self, op: str, role: str, operand: Any, x: MLOperand,
                    shape: tuple[int, ...]) -> MLOperand | None:
        """An optional (or required) per-channel operand: input's data type and `shape`."""
        if operand is None:
            return None
        p = self._operand(op, role, operand)
        v.same_type(op, role, p.data_type, "input", x.data_type)
        v.same_shape(op, role, p.shape, shape)
        return p

    # -- operators -------------------------------------------------------------------------
    def batch_normalization(self, input: MLOperand, mean: MLOperand, variance: MLOperand, *,
                            scale: MLOperand | None = None, bias: MLOperand | None = None,
                            axis: int = 1, epsilon: float = 1e-5,
                            label: str = "") -> MLOperand:
        """scale·(x − mean)/sqrt(variance + epsilon) + bias along `axis` (scale 1, bias 0
        when absent)."""
        op = "batchNormalization"
        x = self._operand(op, "input", input)
        m = self._operand(op, "mean", mean)
        var = self._operand(op, "variance", variance)
        a = v.axis(op, "axis", axis, x.rank)
        channels = (x.shape[a],)
        self._norm_param(op, "mean", m, x, channels)
        self._norm_param(op, "variance", var, x, channels)
        s = self._norm_param(op, "scale", scale, x, channels)
        b = self._norm_param(op, "bias", bias, x, channels)
        eps = _finite(op, "epsilon", epsilon)
        return self._emit1(op, (x, m, var), {"scale": s, "bias": b, "axis": a, "epsilon": eps,
                                             "label": label or None}, x.data_type, x.shape)

    def instance_normalization(self, input: MLOperand, *, scale: MLOperand | None = None,
                               bias: MLOperand | None = None, epsilon: float = 1e-5,
                               layout: str = "nchw", label: str = "") -> MLOperand:
        """Per sample and channel: scale·(x − mean)/sqrt(var + epsilon) + bias over the two
        spatial dimensions (population variance)."""
        op = "instanceNormalization"
        x = self._operand(op, "input", input)
        lay = v.enum(op, "layout", layout, LAYOUTS)
        channels = (x.shape[1 if lay == "nchw" else 3],)
        s = self._norm_param(op, "scale", scale, x, channels)
        b = self._norm_param(op, "bias", bias, x, channels)
        eps = _finite(op, "epsilon", epsilon)
        return self._emit1(op, (x,), {"scale": s, "bias": b, "epsilon": eps, "layout": lay,
                                      "label": label or None}, x.data_type, x.shape)

    def layer_normalization(self, input: MLOperand, *, scale: MLOperand | None = None,
                            bias: MLOperand | None = None, axes: Sequence[int] | None = None,
                            epsilon: float = 1e-5, label: str = "") -> MLOperand:
        """scale·(x − mean)/sqrt(var + epsilon) + bias with mean and population variance over
        `axes`; the graph stores the resolved axes."""
        op = "layerNormalization"
        x = self._operand(op, "input", input)
        resolved = (list(range(1, x.rank)) if axes is None
                    else list(v.axes(op, "axes", axes, x.rank)))
        shape = tuple(x.shape[a] for a in resolved)
        s = self._norm_param(op, "scale", scale, x, shape)
        b = self._norm_param(op, "bias", bias, x, shape)
        eps = _finite(op, "epsilon", epsilon)
        return self._emit1(op, (x,), {"scale": s, "bias": b, "axes": resolved, "epsilon": eps,
                                      "label": label or None}, x.data_type, x.shape)
