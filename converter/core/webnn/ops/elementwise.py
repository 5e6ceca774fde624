"""MLGraphBuilder operators: element-wise binary, comparison, logical, unary, activation,
cast, clamp and where.

Restrictions (spec): binary operands share one data type and broadcast bidirectionally;
comparisons and logical ops output uint8 0/1; logical ops take uint8 only.
"""

from __future__ import annotations

import math
from typing import Any

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.dtypes import DATA_TYPES, cast_number
from converter.core.webnn.operand import MLOperand


class ElementwiseOps(BuilderBase):
    # -- helpers ---------------------------------------------------------------------------
    def _binary(self, op: str, a: Any, b: Any, label: str, out_type: str | None = None
                ) -> MLOperand:
        a = self._operand(op, "a", a)
        b = self._operand(op, "b", b)
        v.same_type(op, "b", b.data_type, "a", a.data_type)
        shape = v.bidirectional_broadcast(op, a.shape, b.shape)
        return self._emit1(op, (a, b), {"label": label or None}, out_type or a.data_type, shape)

    def _unary(self, op: str, x: Any, label: str, role: str = "input",
               out_type: str | None = None, **options: Any) -> MLOperand:
        x = self._operand(op, role, x)
        return self._emit1(op, (x,), {**options, "label": label or None},
                           out_type or x.data_type, x.shape)

    def _double(self, op: str, what: str, value: Any) -> float:
        value = v.number(op, what, value)
        if not math.isfinite(value):
            raise v.fail(op, f"{what} must be a finite number, got {value}")
        return float(value)

    # -- binary arithmetic -----------------------------------------------------------------
    def add(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("add", a, b, label)

    def sub(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("sub", a, b, label)

    def mul(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("mul", a, b, label)

    def div(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        """Integer division truncates toward zero; integer division by zero gives 0."""
        return self._binary("div", a, b, label)

    def max(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("max", a, b, label)

    def min(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("min", a, b, label)

    def pow(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("pow", a, b, label)

    # -- comparisons and logical -----------------------------------------------------------
    def equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("equal", a, b, label, "uint8")

    def not_equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("notEqual", a, b, label, "uint8")

    def greater(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("greater", a, b, label, "uint8")

    def greater_or_equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("greaterOrEqual", a, b, label, "uint8")

    def lesser(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("lesser", a, b, label, "uint8")

    def lesser_or_equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("lesserOrEqual", a, b, label, "uint8")

    def logical_and(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("logicalAnd", a, b, label, "uint8")

    def logical_or(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("logicalOr", a, b, label, "uint8")

    def logical_xor(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        return self._binary("logicalXor", a, b, label, "uint8")

    def logical_not(self, a: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("logicalNot", a, label, role="a", out_type="uint8")

    def is_nan(self, a: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("isNaN", a, label, role="a", out_type="uint8")

    def is_infinite(self, a: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("isInfinite", a, label, role="a", out_type="uint8")

    # -- unary -----------------------------------------------------------------------------
    def abs(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("abs", input, label)

    def ceil(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("ceil", input, label)

    def cos(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("cos", input, label)

    def erf(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("erf", input, label)

    def exp(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("exp", input, label)

    def floor(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("floor", input, label)

    def identity(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("identity", input, label)

    def log(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("log", input, label)

    def neg(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("neg", input, label)

    def reciprocal(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("reciprocal", input, label)

    def round_even(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("roundEven", input, label)

    def sin(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("sin", input, label)

    def sign(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("sign", input, label)

    def sqrt(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("sqrt", input, label)

    def tan(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("tan", input, label)

    # -- activations -----------------------------------------------------------------------
    def elu(self, input: MLOperand, *, alpha: float = 1.0, label: str = "") -> MLOperand:
        return self._unary("elu", input, label, alpha=self._double("elu", "alpha", alpha))

    def gelu(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("gelu", input, label)

    def hard_sigmoid(self, input: MLOperand, *, alpha: float = 0.2, beta: float = 0.5,
                     label: str = "") -> MLOperand:
        return self._unary("hardSigmoid", input, label,
                           alpha=self._double("hardSigmoid", "alpha", alpha),
                           beta=self._double("hardSigmoid", "beta", beta))

    def hard_swish(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("hardSwish", input, label)

    def leaky_relu(self, input: MLOperand, *, alpha: float = 0.01, label: str = "") -> MLOperand:
        return self._unary("leakyRelu", input, label,
                           alpha=self._double("leakyRelu", "alpha", alpha))

    def linear(self, input: MLOperand, *, alpha: float = 1.0, beta: float = 0.0,
               label: str = "") -> MLOperand:
        return self._unary("linear", input, label, alpha=self._double("linear", "alpha", alpha),
                           beta=self._double("linear", "beta", beta))

    def relu(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("relu", input, label)

    def sigmoid(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("sigmoid", input, label)

    def softplus(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("softplus", input, label)

    def softsign(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("softsign", input, label)

    def tanh(self, input: MLOperand, *, label: str = "") -> MLOperand:
        return self._unary("tanh", input, label)

    def prelu(self, input: MLOperand, slope: MLOperand, *, label: str = "") -> MLOperand:
        """slope has input's data type and broadcasts bidirectionally with it."""
        x = self._operand("prelu", "input", input)
        s = self._operand("prelu", "slope", slope)
        v.same_type("prelu", "slope", s.data_type, "input", x.data_type)
        shape = v.bidirectional_broadcast("prelu", x.shape, s.shape, "input and slope")
        return self._emit1("prelu", (x, s), {"label": label or None}, x.data_type, shape)

    # -- cast, clamp, where ----------------------------------------------------------------
    def cast(self, input: MLOperand, data_type: str, *, label: str = "") -> MLOperand:
        x = self._operand("cast", "input", input)
        v.enum("cast", "data type", data_type, DATA_TYPES)
        return self._emit("cast", (x, data_type), {"label": label or None},
                          [(data_type, x.shape)])[0]

    def clamp(self, input: MLOperand, *, min_value: float | int | None = None,
              max_value: float | int | None = None, label: str = "") -> MLOperand:
        """Bounds are cast to the input data type; a missing bound is not applied."""
        x = self._operand("clamp", "input", input)
        lo = None if min_value is None else cast_number(
            v.number("clamp", "minValue", min_value), x.data_type)
        hi = None if max_value is None else cast_number(
            v.number("clamp", "maxValue", max_value), x.data_type)
        if lo is not None and hi is not None and lo > hi:
            raise v.fail("clamp", f"minValue ({lo}) must not be greater than maxValue ({hi})")
        return self._emit1("clamp", (x,), {"minValue": lo, "maxValue": hi,
                                           "label": label or None}, x.data_type, x.shape)

    def where(self, condition: MLOperand, true_value: MLOperand, false_value: MLOperand, *,
              label: str = "") -> MLOperand:
        c = self._operand("where", "condition", condition)
        t = self._operand("where", "trueValue", true_value)
        f = self._operand("where", "falseValue", false_value)
        v.same_type("where", "falseValue", f.data_type, "trueValue", t.data_type)
        shape = v.bidirectional_broadcast("where", t.shape, f.shape, "trueValue and falseValue")
        shape = v.bidirectional_broadcast("where", c.shape, shape, "condition and values")
        return self._emit1("where", (c, t, f), {"label": label or None}, t.data_type, shape)
