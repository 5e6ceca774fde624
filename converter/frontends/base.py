"""The front-end registry and the records front ends hand back to the layers above.

A front end (one sub-package of `converter/frontends/`) knows one source format: how to
recognise a file of it, read it into the `converter.core.ir` source IR and import that into a
WebNN graph, run the original model in its own framework (for validation), and describe a
model without converting it (for `inspect`). It registers a `Frontend` record here when its
package is imported; `converter/frontends/__init__.py` imports the built-in ones lazily, so
nothing outside `converter/frontends/` ever names a format.

The heavy work lives in the front end's `frontend` module (``<package>.frontend``), imported
only when a call needs it: detecting a file's format costs no onnx/tflite import.
"""

from __future__ import annotations

import importlib
import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from converter.core.errors import InvalidModel, exception_text
from converter.core.files import NotRegularFile, read_regular
from converter.core.fixes import Fix, Interface, render_fixes
from converter.core.ir import Dim, SourceGraph
from converter.frontends.control_inputs import ControlInput

if TYPE_CHECKING:  # (light at run time: detecting a format loads no graph machinery)
    from converter.importer import ImportObserver, ImportResult
    from converter.results.result import ConversionResult

Sniff = Callable[[bytes, str], bool]
"""`sniff(head, suffix)`: True when the first bytes of a file (at least 64 where the file
has them) or its lower-case suffix say it is this front end's format."""


class FrontendImpl(Protocol):
    """What a front end's implementation module (`Frontend.impl()`) defines."""

    def accepts(self, model: Any) -> bool:
        """True for an in-memory model object of this format."""

    def convert(self, model: Any, *, label: str, **options: Any) -> ConversionResult:
        """Convert a model (a path, bytes, or an object `accepts` takes): read it, import it
        (`import_source`) and return the result; the one path from a model to a
        ConversionResult."""

    def import_source(self, source: SourceGraph, *, observer: ImportObserver | None = None
                      ) -> ImportResult:
        """Import a SourceGraph the format's reader gave through the importer loop with the
        format's `FrontEnd` and op registry, watched by `observer`."""

    def run_reference(self, model: Any, source: Any, inputs: Mapping[str, np.ndarray], *,
                      intermediates: bool = False, threads: int = 0) -> SourceRun:
        """Run the original model in the format's reference framework."""

    def inspect(self, model: str | os.PathLike[str] | bytes, *, label: str,
                signature: str | None = None) -> ModelInfo:
        """Describe a model without converting it."""


@dataclass(frozen=True)
class Frontend:
    """One registered source format.

    `name` is the registry key (also `SourceGraph.source_format` and the `fmt` argument of
    the API), `label` its display name, `reference` the framework that runs originals,
    `version_unit` what its handler versions are called ("opset", "version"), `suffixes`
    the usual file suffixes, `options` the `convert()` keyword options it accepts,
    `handlers` the op_mappings package of its op handlers, `module` the implementation
    module (see the module docstring) and `fallback` whether files nobody else claims are
    tried with it.
    """

    name: str
    label: str
    reference: str
    version_unit: str
    suffixes: tuple[str, ...]
    options: frozenset[str]
    handlers: str
    module: str
    sniff: Sniff
    fallback: bool = False

    def impl(self) -> FrontendImpl:
        """The implementation module (`FrontendImpl`): `accepts(model)`,
        `convert(model, *, label, **options)` -> ConversionResult, `run_reference(model,
        source, inputs, *, intermediates, threads)` -> SourceRun, `inspect(model, *, label,
        signature)` -> ModelInfo and `import_source(source, *, observer)` -> ImportResult."""
        # a module imported by name has no static type; its functions are the protocol's
        return cast(FrontendImpl, importlib.import_module(self.module))

    def op_registry(self) -> ModuleType:
        """The op_mappings package of this format (`lookup`, `handlers`, `support_table`)."""
        return importlib.import_module(self.handlers)

    def versions_text(self, versions: Mapping[str, int]) -> str:
        """How a model's versions read in `inspect` (e.g. "ai.onnx 17, com.microsoft 1")."""
        if self.version_unit == "opset":
            return ", ".join(f"{k or 'ai.onnx'} {v}" for k, v in versions.items())
        return ", ".join(f"v{v}" for v in versions.values())


_FRONTENDS: dict[str, Frontend] = {}


def register(frontend: Frontend) -> Frontend:
    """Add a front end to the registry (ValueError when the name is taken)."""
    if frontend.name in _FRONTENDS and _FRONTENDS[frontend.name] is not frontend:
        raise ValueError(f"front end {frontend.name!r} registered twice")
    _FRONTENDS[frontend.name] = frontend
    return frontend


BUILTIN = ("converter.frontends.tflite", "converter.frontends.onnx")
"""The front-end packages shipped with the converter, in detection order."""

_loaded = False


def load_builtin() -> None:
    """Import the built-in front-end packages (idempotent; they are light: their heavy
    implementation modules load on first use)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN:
            importlib.import_module(module)


def registered() -> dict[str, Frontend]:
    """The registered front ends by name (after importing the built-in ones)."""
    load_builtin()
    return dict(_FRONTENDS)


# -- records front ends return ------------------------------------------------------------


@dataclass(frozen=True)
class SourceRun:
    """Outputs of the original model keyed by output name (graph order), intermediate values
    keyed by value name (node outputs in topological order; empty unless requested), the run
    time in seconds and notes (e.g. why intermediates are missing)."""

    outputs: dict[str, np.ndarray]
    intermediates: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TensorSummary:
    """A graph input or output as the model declares it."""

    name: str
    dtype: str
    shape: tuple[Dim, ...] | None

    def shape_text(self) -> str:
        if self.shape is None:
            return "[unknown rank]"
        return "[" + ", ".join("?" if d is None else str(d) for d in self.shape) + "]"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype,
                "shape": None if self.shape is None else list(self.shape)}


@dataclass(frozen=True)
class OpUsage:
    """One op type of the model: how many nodes use it and whether it converts."""

    op_type: str
    domain: str
    version: int
    count: int
    status: str
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.domain}::{self.op_type}" if self.domain else self.op_type

    def to_dict(self) -> dict[str, Any]:
        return {"op_type": self.op_type, "domain": self.domain, "version": self.version,
                "count": self.count, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class ModelInfo:
    """The result of `inspect_model`.

    `free_dims` names the free dimensions (dimension names, `input[axis]` for unnamed ones,
    `input (unknown rank)`); `fixes` are the settings that fix those a conversion needs
    (suggested values or placeholders, see `converter.frontends.free_dims`); `defaults` are
    free dimensions the converter sets itself when nobody does (the value it uses, e.g. the
    size LiteRT runs a TFLite -1 dimension at, 1 for a batch), `defaults_why` says why (empty:
    the size the reference framework runs); `control_inputs` are the inputs that only
    steer shapes, sizes or control flow and need pinning.
    """

    model: str
    format: str
    producer: str
    versions: dict[str, int]
    inputs: tuple[TensorSummary, ...]
    outputs: tuple[TensorSummary, ...]
    free_dims: tuple[str, ...]
    ops: tuple[OpUsage, ...]
    signatures: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    defaults: tuple[Fix, ...] = ()
    control_inputs: tuple[ControlInput, ...] = ()
    defaults_why: str = ""

    @property
    def node_count(self) -> int:
        return sum(o.count for o in self.ops)

    @property
    def unsupported(self) -> tuple[OpUsage, ...]:
        return tuple(o for o in self.ops if o.status == "unsupported")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "format": self.format, "producer": self.producer,
                "versions": dict(self.versions),
                "inputs": [t.to_dict() for t in self.inputs],
                "outputs": [t.to_dict() for t in self.outputs],
                "free_dims": list(self.free_dims),
                "fixes": [f.to_dict() for f in self.fixes],
                "defaults": [f.to_dict() for f in self.defaults],
                "control_inputs": [c.to_dict() for c in self.control_inputs],
                "signatures": list(self.signatures),
                "nodes": self.node_count, "ops": [o.to_dict() for o in self.ops],
                "unsupported": [o.key for o in self.unsupported]}

    def to_text(self, interface: Interface = "python") -> str:
        """Human-readable summary; fixes are spelled for `interface` (command-line flags or
        keyword arguments of `converter.convert()`)."""
        frontend = registered()[self.format]
        versions = frontend.versions_text(self.versions)
        lines = [f"model: {self.model} ({self.format.upper()}, {versions})"]
        if self.producer:
            lines.append(f"producer: {self.producer}")
        if self.signatures:
            lines.append(f"signatures: {', '.join(self.signatures)}")
        for title, items in (("inputs", self.inputs), ("outputs", self.outputs)):
            lines.append(f"{title}:")
            width = max((len(t.name) for t in items), default=0)
            lines += [f"  {t.name:<{width}}  {t.dtype:<8} {t.shape_text()}" for t in items]
        if self.free_dims:
            notes = []
            if self.fixes:
                notes.append(f"fix with {render_fixes(self.fixes, interface)}")
            if self.defaults:
                used = ", ".join(_where(f) + f"={f.value}" for f in self.defaults)
                other = render_fixes([replace(f, value=None) for f in self.defaults],
                                     interface)
                why = self.defaults_why or f"the size {frontend.reference} runs"
                notes.append(f"{used} by default, {why}; other sizes: {other}")
            lines.append(f"free dimensions: {', '.join(self.free_dims)} ({'; '.join(notes)})")
        else:
            lines.append("free dimensions: none")
        if self.control_inputs:
            names = ", ".join(_control_text(c) for c in self.control_inputs)
            pins = render_fixes([c.fix for c in self.control_inputs], interface)
            lines.append(f"shape/control inputs: {names}; pin with {pins} (they only decide "
                         "shapes, sizes or control flow)")
        types = len({o.key for o in self.ops})  # a type whose nodes partly fail has two rows
        lines.append(f"ops: {self.node_count} nodes, {types} types, "
                     f"{len(self.unsupported)} unsupported")
        width = max((len(o.key) for o in self.ops), default=0)
        for o in self.ops:
            detail = f" ({o.detail})" if o.detail else ""
            lines.append(f"  {o.key:<{width}}  {o.count:>5}  {o.status}{detail}")
        return "\n".join(lines)


def _where(fix: Fix) -> str:
    return fix.name if fix.axis is None else f"{fix.name}[{fix.axis}]"


def _control_text(c: ControlInput) -> str:
    what = f"steers {', '.join(c.reaches)}"
    if c.compared_with:
        what += f"; compared with {', '.join(str(v) for v in c.compared_with)}"
    return f"{c.name} ({what})"


def ops_histogram(nodes: list[tuple[str, str, int]],
                  status: Callable[[str, str, int], tuple[str, str]]) -> tuple[OpUsage, ...]:
    """Count (op type, domain, version) triples, most used first, each with its status."""
    counts = Counter(nodes)
    out = []
    for (op, domain, version), n in sorted(counts.items(),
                                           key=lambda kv: (-kv[1], kv[0][1], kv[0][0])):
        st, detail = status(op, domain, version)
        out.append(OpUsage(op, domain, version, n, st, detail))
    return tuple(out)


def read_model_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a model file, read (never memory-mapped: a file truncated while it is
    converted cannot kill the process with SIGBUS). InvalidModel when it is missing,
    unreadable or not a regular file (a FIFO, a device, a folder)."""
    try:
        return read_regular(path, "the model file")
    except FileNotFoundError:
        raise InvalidModel(f"model file {str(path)!r} does not exist") from None
    except NotRegularFile as exc:
        raise InvalidModel(str(exc)) from None
    except OSError as exc:
        raise InvalidModel(f"model file {str(path)!r} cannot be read "
                           f"({exc.strerror or exception_text(exc)})") from None
