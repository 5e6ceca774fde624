"""Conversion errors (see ../shared/docs/architecture.md section 4).

Every error a model conversion can raise derives from `ConversionError`. Each carries a stable
`reason_code`, the node it concerns (`node_name`, `op_type`, `domain`, `version`; all optional:
a model-level error has no node), a `hint` (what the user can do about it), a human-readable
`message`, and `to_dict()` for JSON output.

The importer collects node errors instead of stopping at the first one and raises a single
`ConversionFailed` at the end, listing every failed node and a count per op type.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any


class ConversionError(Exception):
    """Base class of every conversion error.

    `constant_candidates` (set by the importer) names the values the failing handler wanted
    to be constants but were computed from graph inputs: pinning the inputs they depend on
    may make the node convertible.
    """

    reason_code: str = "conversion_error"
    default_hint: str = ""
    version_label: str = "opset"  # what `version` counts: ONNX opset, TFLite operator version
    constant_candidates: tuple[str, ...] = ()

    def __init__(self, message: str, *, node_name: str | None = None,
                 op_type: str | None = None, domain: str | None = None,
                 version: int | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node_name = node_name
        self.op_type = op_type
        self.domain = domain
        self.version = version
        self.hint = self.default_hint if hint is None else hint

    def with_node(self, *, node_name: str | None, op_type: str | None, domain: str | None,
                  version: int | None) -> ConversionError:
        """Fill in the node fields that are still unset (returns self)."""
        if self.node_name is None:
            self.node_name = node_name
        if self.op_type is None:
            self.op_type = op_type
        if self.domain is None:
            self.domain = domain
        if self.version is None:
            self.version = version
        return self

    @property
    def where(self) -> str:
        """`Gemm 'fc1' (opset 13)` style description of the node, or '' for model errors."""
        if self.op_type is None and self.node_name is None:
            return ""
        op = self.op_type or "?"
        if self.domain:
            op = f"{self.domain}::{op}"
        name = f" {self.node_name!r}" if self.node_name else ""
        version = (f" ({self.version_label} {self.version})" if self.version is not None
                   else "")
        return f"{op}{name}{version}"

    def __str__(self) -> str:
        where = self.where
        text = f"{where}: {self.message}" if where else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with stable keys."""
        return {"reason_code": self.reason_code, "message": self.message,
                "node_name": self.node_name, "op_type": self.op_type, "domain": self.domain,
                "version": self.version, "hint": self.hint}


class UnsupportedOp(ConversionError):
    """No handler exists for the op (at the node's opset version)."""

    reason_code = "unsupported_op"
    default_hint = ("add a handler in op_mappings/onnx/, or replace the op in the source model")


class UnsupportedAttribute(ConversionError):
    """The op is mapped, but an attribute value (or input/dtype combination) is not."""

    reason_code = "unsupported_attribute"


class UnsupportedDataType(ConversionError):
    """A tensor type WebNN has no equivalent of (double inputs, strings, int16, ...)."""

    reason_code = "unsupported_data_type"


class RequiresConstantInput(ConversionError):
    """An input that must be known at conversion time (shape, axes, pads, ...) is not."""

    reason_code = "requires_constant_input"
    default_hint = ("fix free dimensions (free_dims/input_shapes) or pin inputs (pin_inputs) "
                    "so that the value folds to a constant")
    value_name: str | None = None
    """The value that had to be a constant, when known (used to decide what to pin)."""


class InvalidModel(ConversionError):
    """The model file or graph is malformed or unsafe to read."""

    reason_code = "invalid_model"


class UnresolvedDimensions(InvalidModel):
    """Graph inputs still have free (symbolic or unknown) dimensions."""

    reason_code = "unresolved_dimensions"
    default_hint = ("fix them by name with free_dims={'batch': 1} or whole shapes with "
                    "input_shapes={'x': [1, 3, 224, 224]}")


class SpecViolation(ConversionError):
    """A WebNN builder call rejected the mapped operation (an MLTypeError)."""

    reason_code = "spec_violation"


class InternalError(ConversionError):
    """A handler failed unexpectedly (a bug in the converter)."""

    reason_code = "internal_error"
    default_hint = "please report this with the model"


class ConversionFailed(ConversionError):
    """Aggregate of every node error of one conversion.

    `errors` lists them in graph order; `counts` maps op type to the number of failed nodes
    of that type; `report` (when set) is the conversion report up to the failure.
    """

    reason_code = "conversion_failed"

    def __init__(self, errors: Sequence[ConversionError], report: Any = None) -> None:
        self.errors = list(errors)
        self.report = report
        self.counts: dict[str, int] = dict(sorted(Counter(
            _op_key(e) for e in self.errors).items()))
        per_op = ", ".join(f"{op} x{n}" for op, n in self.counts.items())
        lines = [f"{len(self.errors)} node(s) could not be converted ({per_op}):"]
        lines += [f"  - [{e.reason_code}] {e}" for e in self.errors]
        super().__init__("\n".join(lines), hint="")

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["counts"] = dict(self.counts)
        out["errors"] = [e.to_dict() for e in self.errors]
        return out


def _op_key(error: ConversionError) -> str:
    op = error.op_type or "<model>"
    return f"{error.domain}::{op}" if error.domain else op
