"""Operator families the target rules share (spec operator names): the elementwise unary and
binary operators and the reductions, which `rules_rank` runs on merged axes and
`rules_layout` pushes transposes through.

Restrictions: only constants; registers no rule (a rule module importing another rule module
would register that module's rules ahead of the order `converter.passes.targets.passes` sets).
"""

from __future__ import annotations

UNARY = ("abs", "cast", "ceil", "clamp", "cos", "elu", "erf", "exp", "floor", "gelu",
         "hardSigmoid", "hardSwish", "identity", "isInfinite", "isNaN", "leakyRelu", "linear",
         "log", "logicalNot", "neg", "reciprocal", "relu", "roundEven", "sigmoid", "sign", "sin",
         "softplus", "softsign", "sqrt", "tan", "tanh")
"""Elementwise operators of one operand."""
BINARY = ("add", "div", "equal", "greater", "greaterOrEqual", "lesser", "lesserOrEqual",
          "logicalAnd", "logicalOr", "logicalXor", "max", "min", "mul", "notEqual", "pow",
          "sub", "where")
"""Elementwise operators of two operands (and where's three) with broadcasting."""
REDUCE = ("reduceL1", "reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceMax", "reduceMean",
          "reduceMin", "reduceProduct", "reduceSum", "reduceSumSquare")
"""Reductions over `axes`."""

__all__ = ["BINARY", "REDUCE", "UNARY"]
