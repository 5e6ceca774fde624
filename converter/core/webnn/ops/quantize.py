"""MLGraphBuilder operators: quantizeLinear and dequantizeLinear.

Restrictions (spec):
- dequantizeLinear(input, scale, zeroPoint) = (input - zeroPoint) * scale. input is uint8,
  int8, uint32, int32 or (optional types) int4 / uint4; zeroPoint has input's data type;
  scale is float32 or float16 and gives the output data type.
- quantizeLinear(input, scale, zeroPoint) = saturate(roundEven(input / scale) + zeroPoint)
  to zeroPoint's data type range. input is float32 or float16; scale has input's data type;
  zeroPoint is uint8, int8, uint32, int32, int4 or uint4 and gives the output data type
  (a 4-bit result can only feed dequantizeLinear: no other op, and no graph output, takes
  the 4-bit types).
- scale and zeroPoint have the input's rank and the same shape as each other, and are
  blockwise broadcastable to the input: each input dimension is a whole multiple of the
  scale dimension, and each scale element covers one contiguous block (per-tensor = all 1s,
  per-axis = input dimension on one axis, blocked = a divisor). Scale should be positive;
  non-positive scales give implementation-defined results.
"""

from __future__ import annotations

from collections.abc import Sequence

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.operand import MLOperand


def blockwise_broadcastable(shape: Sequence[int], target: Sequence[int]) -> bool:
    """The spec's "blockwise broadcasting": equal ranks and every target dimension an
    integer multiple of the corresponding `shape` dimension."""
    return len(shape) == len(target) and all(t % s == 0 for s, t in zip(shape, target,
                                                                         strict=True))


def blocked_views(shape: Sequence[int], params: Sequence[int]) -> tuple[list[int], list[int]]:
    """(values, parameters) shapes under which a scale / zero point of shape `params`
    broadcasts over values of `shape` elementwise (the spec's blockwise broadcasting): each
    axis with 1 < p < d split into [p, d / p] for the values and [p, 1] for the parameters;
    an axis where p is 1 or d kept. Restriction: `params` blockwise broadcastable to
    `shape` (`blockwise_broadcastable`)."""
    values: list[int] = []
    blocked: list[int] = []
    for d, p in zip(shape, params, strict=True):
        if p in (1, d):
            values.append(d)
            blocked.append(p)
        else:
            values += [p, d // p]
            blocked += [p, 1]
    return values, blocked


class QuantizeOps(BuilderBase):
    def _quantize_common(self, op: str, input: MLOperand, scale: MLOperand,
                         zero_point: MLOperand) -> tuple[MLOperand, MLOperand, MLOperand]:
        x = self._operand(op, "input", input)
        s = self._operand(op, "scale", scale)
        zp = self._operand(op, "zeroPoint", zero_point)
        if op == "quantizeLinear":
            v.same_type(op, "scale", s.data_type, "input", x.data_type)
        else:
            v.same_type(op, "zeroPoint", zp.data_type, "input", x.data_type)
        if s.rank != x.rank or zp.rank != x.rank:
            raise v.fail(op, f"scale rank ({s.rank}) and zeroPoint rank ({zp.rank}) must "
                             f"equal the input rank ({x.rank})")
        if s.shape != zp.shape:
            raise v.fail(op, f"scale shape {list(s.shape)} must equal zeroPoint shape "
                             f"{list(zp.shape)}")
        if not blockwise_broadcastable(s.shape, x.shape):
            raise v.fail(op, f"scale shape {list(s.shape)} is not blockwise broadcastable "
                             f"to the input shape {list(x.shape)} (each input dimension "
                             "must be a multiple of the scale dimension)")
        return x, s, zp

    def dequantize_linear(self, input: MLOperand, scale: MLOperand, zero_point: MLOperand, *,
                          label: str = "") -> MLOperand:
        """(input - zeroPoint) * scale in scale's data type; see the module docstring."""
        x, s, zp = self._quantize_common("dequantizeLinear", input, scale, zero_point)
        return self._emit1("dequantizeLinear", (x, s, zp), {"label": label or None},
                           s.data_type, x.shape)

    def quantize_linear(self, input: MLOperand, scale: MLOperand, zero_point: MLOperand, *,
                        label: str = "") -> MLOperand:
        """saturate(roundEven(input / scale) + zeroPoint) in zeroPoint's data type; see the
        module docstring."""
        x, s, zp = self._quantize_common("quantizeLinear", input, scale, zero_point)
        return self._emit1("quantizeLinear", (x, s, zp), {"label": label or None},
                           zp.data_type, x.shape)
