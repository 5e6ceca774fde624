"""Conversion errors.

Every error a model conversion can raise derives from `ConversionError`. Each carries a stable
`reason_code`, the node it concerns (`node_name`, `op_type`, `domain`, `version`; all optional:
a model-level error has no node), a `hint` (what the user can do about it), a human-readable
`message`, structured `fixes` (conversion options that would resolve it, see
`converter.core.fixes.Fix`) and `to_dict()` for JSON output.

Fixes and option names in hints are rendered for the interface in use by
`converter.core.fixes`: `str(error)` (and `render("python")`) spells them as the keyword
arguments of `converter.convert()`, `render("cli")` as the command-line flags.

The importer collects node errors instead of stopping at the first one and raises a single
`ConversionFailed` at the end, listing the failed nodes and a count per op type.

Every rendering is one line (`one_line`): names from a model (node names, domains, op types,
file names) can hold anything, so characters that are not printable (controls, newlines,
U+2028/U+2029 and other separators, format characters) are written as Python escapes (`\\n`,
`\\u2028`), names longer than `NAME_LIMIT` keep their head and tail and say how many
characters were cut, and so do words longer than `WORD_LIMIT` and messages longer than
`MESSAGE_LIMIT`. `exception_text(exc)` joins the lines of a foreign exception's message
(onnx.checker, protobuf, numpy) for quoting it in a message.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Self

from converter.core.fixes import ALL_LISTED, Fix, Interface, render_fixes, render_option_names

# -- one-line messages ------------------------------------------------------------------

NAME_LIMIT = 120
"""Names (node, op, domain, tensor and file names) longer than this are shortened."""
WORD_LIMIT = 240
"""Words (runs of characters without a space) longer than this are shortened."""
MESSAGE_LIMIT = 4000
"""Messages longer than this are shortened."""
MAX_LISTED = 20
"""`ConversionFailed` lists this many node errors; the others are counted."""

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LONG_WORD = re.compile(r"\S{" + str(WORD_LIMIT + 1) + ",}")
_BREAKS = re.compile(r"[ \t]*(?:\r\n|\n)\s*")


def escape(text: str) -> str:
    """`text` with each character that is not printable (`str.isprintable`: controls,
    newlines, U+2028/U+2029 and the other separators but the space, format and unassigned
    characters, lone surrogates) written as a Python escape: `\\n`, `\\x1b`, `\\u2028`."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
                       if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def _cut(text: str, limit: int) -> tuple[str, int, str]:
    """(head, characters cut, tail) of `text` shortened to about `limit` characters."""
    if len(text) <= limit:
        return text, 0, ""
    head = max(1, limit * 2 // 3)
    tail = max(1, limit - head)
    return text[:head], len(text) - head - tail, text[-tail:]


def _marker(cut: int) -> str:
    return f"...[{cut} characters cut]..."


def shorten(text: str, limit: int = NAME_LIMIT) -> str:
    """`text` cut to its head and tail when longer than `limit`, saying how many characters
    were cut: `abc...[1200 characters cut]...xyz`."""
    head, cut, tail = _cut(text, limit)
    return head if not cut else f"{head}{_marker(cut)}{tail}"


def show(name: object, limit: int = NAME_LIMIT) -> str:
    """A name for a message, unquoted: escaped and shortened."""
    head, cut, tail = _cut(str(name), limit)
    return escape(head) if not cut else f"{escape(head)}{_marker(cut)}{escape(tail)}"


def quoted(name: object, limit: int = NAME_LIMIT) -> str:
    """A name for a message, quoted as `repr` quotes it (escapes included) and shortened:
    `'abc'...[1200 characters cut]...'xyz'`."""
    head, cut, tail = _cut(str(name), limit)
    return repr(head) if not cut else f"{head!r}{_marker(cut)}{tail!r}"


def exception_text(exc: BaseException) -> str:
    """The message of a (foreign) exception on one line: its lines joined by spaces, the
    exception's type name when it has no message."""
    text = _BREAKS.sub(" ", str(exc).strip())
    return text or type(exc).__name__


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` as one line: characters that are not printable escaped (newlines too), words
    longer than `WORD_LIMIT` and the whole text when longer than `limit` shortened."""
    text = escape(text)
    if len(text) > WORD_LIMIT:
        text = _LONG_WORD.sub(lambda m: shorten(m.group(0), WORD_LIMIT), text)
    return shorten(text, limit)


class ConversionError(Exception):
    """Base class of every conversion error.

    `constant_candidates` (set by the importer) names the values the failing handler wanted
    to be constants but were computed from graph inputs: pinning the inputs they depend on
    may make the node convertible. `fixes` (front ends set them) are the option settings
    that would resolve the error; the hint shows them after `fix_prefix`.
    """

    reason_code: str = "conversion_error"
    default_hint: str = ""
    fix_prefix: str = "try"
    version_label: str = "opset"  # what `version` counts: ONNX opset, TFLite operator version
    constant_candidates: tuple[str, ...] = ()
    inner: tuple[ConversionError, ...] = ()
    """The errors of the nodes inside a function body or subgraph that this error stands for
    (set by the importer when a node fails because of its body), in their order."""

    def __init__(self, message: str, *, node_name: str | None = None,
                 op_type: str | None = None, domain: str | None = None,
                 version: int | None = None, hint: str | None = None,
                 fixes: Sequence[Fix] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.node_name = node_name
        self.op_type = op_type
        self.domain = domain
        self.version = version
        self.hint = self.default_hint if hint is None else hint
        self.fixes: tuple[Fix, ...] = tuple(fixes)

    state: ClassVar[tuple[str, ...]] = (
        "message", "node_name", "op_type", "domain", "version", "hint", "fixes",
        "version_label", "constant_candidates", "inner")
    """The attributes that make up an error (`copy` copies them); a subclass that adds
    attributes extends it."""

    def copy(self) -> Self:
        """A new error of this class with the attributes of `state` and the same `args`, its
        own (`copy.copy` is not used: with tblib's exception pickling installed, as
        `distributed` does on import, its copy shares the original's attributes)."""
        err = type(self).__new__(type(self))
        for name in type(self).state:
            setattr(err, name, getattr(self, name))
        err.args = self.args
        return err

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

    def add_fixes(self, fixes: Iterable[Fix]) -> ConversionError:
        """Append fixes not already listed (returns self)."""
        self.fixes = tuple(dict.fromkeys((*self.fixes, *fixes)))
        return self

    @property
    def where(self) -> str:
        """`Gemm 'fc1' (opset 13)` style description of the node, or '' for model errors."""
        if self.op_type is None and self.node_name is None:
            return ""
        op = show(self.op_type) if self.op_type else "?"
        if self.domain:
            op = f"{show(self.domain)}::{op}"
        name = f" {quoted(self.node_name)}" if self.node_name else ""
        version = (f" ({self.version_label} {self.version})" if self.version is not None
                   else "")
        return f"{op}{name}{version}"

    def hint_text(self, interface: Interface = "python") -> str:
        """The hint for `interface`: the free-text hint (option names spelled for the
        interface) and the fixes after `fix_prefix`."""
        parts = []
        if self.hint and not (self.fixes and self.hint == self.default_hint):
            parts.append(render_option_names(self.hint, interface))
        if self.fixes:
            parts.append(f"{self.fix_prefix} {render_fixes(self.fixes, interface)}")
        return "; ".join(parts)

    def render(self, interface: Interface = "python") -> str:
        """The one-line message for `interface` (`str(error)` is the Python rendering); see
        `one_line`."""
        where = self.where
        text = f"{where}: {self.message}" if where else self.message
        hint = self.hint_text(interface)
        if hint:
            text += f" (hint: {hint})"
        return one_line(text)

    def __str__(self) -> str:
        return self.render("python")

    def to_dict(self, interface: Interface = "python") -> dict[str, Any]:
        """JSON-ready form with stable keys; `hint` is rendered for `interface`, `fixes`
        carry both renderings."""
        return {"reason_code": self.reason_code, "message": self.message,
                "node_name": self.node_name, "op_type": self.op_type, "domain": self.domain,
                "version": self.version, "hint": self.hint_text(interface),
                "fixes": [f.to_dict() for f in self.fixes]}


class UnsupportedOp(ConversionError):
    """No handler exists for the op (at the node's opset version)."""

    reason_code = "unsupported_op"
    default_hint = ("add a handler in op_mappings/onnx/, or replace the op in the source model")


class UnsupportedAttribute(ConversionError):
    """The op is mapped, but an attribute value (or input/dtype combination) is not."""

    reason_code = "unsupported_attribute"


class UseFunctionBody(UnsupportedAttribute):
    """A handler declines its node: the op's own definition should be converted instead.

    The ONNX importer catches it and inlines the op's function body (a schema function or a
    model-local function), as it does for ops without a handler; where the op has no body
    (or the front end has no such bodies) it is reported as the unsupported attribute its
    message describes. Raise it before building operations (ones already built are left
    unused)."""


class UnsupportedDataType(ConversionError):
    """A tensor type WebNN has no equivalent of (double inputs, strings, int16, ...)."""

    reason_code = "unsupported_data_type"


class RequiresConstantInput(ConversionError):
    """An input that must be known at conversion time (shape, axes, pads, ...) is not."""

    reason_code = "requires_constant_input"
    default_hint = ("fix free dimensions (free_dims, input_dims, input_shapes) or pin inputs "
                    "(pin_inputs) so that the value folds to a constant")
    value_name: str | None = None
    """The value that had to be a constant, when known (used to decide what to pin)."""
    state = (*ConversionError.state, "value_name")


class InvalidModel(ConversionError):
    """The model file or graph is malformed or unsafe to read."""

    reason_code = "invalid_model"


class UnresolvedDimensions(InvalidModel):
    """Graph inputs still have free (symbolic or unknown) dimensions. Front ends list what
    fixes them in `fixes` (a concrete value where one is sensible, e.g. 1 for a batch,
    otherwise a placeholder)."""

    reason_code = "unresolved_dimensions"
    default_hint = ("fix named dimensions with free_dims, single axes with input_dims or "
                    "whole shapes with input_shapes")
    fix_prefix = "fix them with"
    declared: tuple[tuple[str, tuple[int | str | None, ...] | None], ...] = ()
    """The model's inputs as (name, declared shape) (a shape entry: a size, a dimension name
    or None; None for an unknown rank), where the front end knows them."""
    node_count: int | None = None
    """The model's node count, where the front end knows it (`None`: unknown)."""
    state = (*InvalidModel.state, "declared", "node_count")


class PathOutsideFolder(InvalidModel):
    """A file a model or graph refers to (external data, weights, manifest) lies outside the
    model's folder once symlinks are resolved, or is named by an absolute or `..` path.
    Folders given with `allow_roots` are allowed too (see `converter.core.confine`)."""

    reason_code = "path_outside_folder"
    default_hint = ("files a model refers to must lie inside its folder; to trust another "
                    "folder, allow it with allow_roots")


class ReferenceFailed(ConversionError):
    """The reference framework (onnxruntime, LiteRT) could not load or run the original
    model, or a runtime could not load the exported graph."""

    reason_code = "reference_failed"


class SpecViolation(ConversionError):
    """A WebNN builder call rejected the mapped operation (an MLTypeError)."""

    reason_code = "spec_violation"


class InternalError(ConversionError):
    """A handler failed unexpectedly (a bug in the converter)."""

    reason_code = "internal_error"
    default_hint = "please report this with the model"


class BudgetExceeded(ConversionError):
    """The model asks for more than a budget of `converter.core.budgets.Budgets` allows (a folded
    constant too large, a loop too long, subgraphs nested too deeply, ...), or the
    conversion ran out of memory. Raised before the memory is allocated or the work done;
    the importer stops at the first one (it is never collected into `ConversionFailed`).

    `budget` is the field name (None for running out of memory), `flag` the command-line
    flag that raises it, `amount` and `limit` the amount asked for and the budget."""

    reason_code = "budget_exceeded"
    state = (*ConversionError.state, "budget", "flag", "amount", "limit", "_hints")

    def __init__(self, message: str, *, budget: str | None, flag: str,
                 amount: int | None = None, limit: int | None = None,
                 hint_cli: str | None = None, hint_python: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.budget = budget
        self.flag = flag
        self.amount = amount
        self.limit = limit
        self._hints = {"cli": hint_cli or f"raise it with {flag}",
                       "python": hint_python or f"raise it with budgets=Budgets({budget}=...)"}

    def hint_text(self, interface: Interface = "python") -> str:
        return self._hints[interface]

    def to_dict(self, interface: Interface = "python") -> dict[str, Any]:
        out = super().to_dict(interface)
        out.update(budget=self.budget, flag=self.flag, amount=self.amount, limit=self.limit)
        return out


class ConversionFailed(ConversionError):
    """Aggregate of every node error of one conversion.

    `errors` lists them in graph order; `counts` maps op type to the number of failed nodes
    of that type; `unsupported_ops` maps every op type without a handler to the number of
    its nodes: the failed ones, those inside the function bodies and subgraphs of failed
    nodes (`ConversionError.inner`), and the nodes of those types that were skipped because
    they read a failed node's output (from `report`). `report` (when set) is the conversion
    report up to the failure. The message gives both tallies (the second when it differs
    from the first) and lists the errors rendered for the interface (`render`).
    """

    reason_code = "conversion_failed"
    state = (*ConversionError.state, "errors", "report", "counts", "unsupported_ops")

    def __init__(self, errors: Sequence[ConversionError], report: Any = None) -> None:
        self.errors = list(errors)
        self.report = report
        self.counts: dict[str, int] = dict(sorted(Counter(
            _op_key(e) for e in self.errors).items()))
        self.unsupported_ops: dict[str, int] = _unsupported_ops(self.errors, report)
        super().__init__(self._text("python"), hint="")

    def _text(self, interface: Interface) -> str:
        per_op = ", ".join(f"{show(op)} x{n}" for op, n in self.counts.items())
        if self.unsupported_ops and self.unsupported_ops != self.counts:
            per_op += "; op types without a handler: " + ", ".join(
                f"{show(op)} x{n}" for op, n in self.unsupported_ops.items())
        listed = self.errors[:MAX_LISTED]
        items = "; ".join(f"[{e.reason_code}] {e.render(interface)}" for e in listed)
        text = f"{len(self.errors)} node(s) could not be converted ({per_op}): {items}"
        more = len(self.errors) - len(listed)
        if more:
            text += f"; and {more} more ({ALL_LISTED[interface]} lists every one)"
        return text

    def render(self, interface: Interface = "python") -> str:
        return one_line(self._text(interface))

    def to_dict(self, interface: Interface = "python") -> dict[str, Any]:
        out = super().to_dict(interface)
        out["message"] = self._text(interface)
        out["counts"] = dict(self.counts)
        out["unsupported_ops"] = dict(self.unsupported_ops)
        out["errors"] = [e.to_dict(interface) for e in self.errors]
        return out


def _op_key(error: ConversionError) -> str:
    op = error.op_type or "<model>"
    return f"{error.domain}::{op}" if error.domain else op


def _unsupported_ops(errors: Sequence[ConversionError], report: Any) -> dict[str, int]:
    """Op key -> nodes of op types without a handler (see `ConversionFailed`)."""
    counts: Counter[str] = Counter()

    def walk(found: Sequence[ConversionError]) -> None:
        for e in found:
            if e.inner:
                walk(e.inner)
            elif e.reason_code == "unsupported_op" and e.op_type:
                counts[_op_key(e)] += 1

    walk(errors)
    for record in getattr(report, "nodes", ()):
        if getattr(record, "status", "") == "skipped":
            key = f"{record.domain}::{record.op_type}" if record.domain else record.op_type
            if key in counts:
                counts[key] += 1
    return dict(sorted(counts.items()))
