"""The op-handler registry shared by `op_mappings.onnx` and `op_mappings.tflite` (see
docs/architecture.md section 3).

Each mapping package makes one `Registry` and exposes its methods under the package's public
names (`onnx_op` / `tflite_op`, `lookup`, `handlers`, `support_table`, `builtins`,
`load_all`). Handlers register by decorator; the package's modules are discovered with
pkgutil on first lookup, so adding an op never means editing a central list.

Lookup rule: the handler with the highest `since` that is <= the node's version (ONNX opset of
its domain, TFLite operator-code version), never an exact match. Registering the same
(domain, op type, since) twice is an error.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

HandlerFn = Callable[..., Sequence[Any]]
FoldFn = Callable[..., Sequence[Any] | None]
HandlerT = TypeVar("HandlerT", bound=HandlerFn)


@dataclass(frozen=True)
class Handler:
    """One registered handler. `fold` is a numpy fold function (returning None keeps that
    node in the graph, e.g. to keep a 4-bit weight packed), or False where the op must
    stay in the graph even when every input is a constant (TFLite)."""

    op_type: str
    domain: str
    since: int
    fn: HandlerFn
    const_inputs: tuple[int, ...] = ()
    fold: FoldFn | bool | None = None
    module: str = ""

    @property
    def doc(self) -> str:
        """The restriction text: the handler's docstring, else its module's."""
        text = self.fn.__doc__ or getattr(sys.modules.get(self.module), "__doc__", "") or ""
        return " ".join(text.split())


def mapping_modules(path: Iterable[str], package: str) -> list[str]:
    """The names of the mapping modules under `path` (the folders of package `package`),
    sub-packages included, in file-system order; names starting with "_" are skipped, and
    so is everything inside a package so named."""
    out: list[str] = []
    for mod in pkgutil.iter_modules(list(path), prefix=f"{package}."):
        if mod.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        out.append(mod.name)
        if mod.ispkg:
            sub = importlib.import_module(mod.name)
            out.extend(mapping_modules(getattr(sub, "__path__", ()), mod.name))
    return out


class Registry:
    """The handlers of one source format.

    `label` names the format in error messages; `package` / `path` are the package whose
    modules `load_all` imports (modules whose names start with "_" are skipped);
    `normalize_domain` maps domain aliases to one key (ONNX: "ai.onnx" -> "").
    """

    def __init__(self, label: str, package: str, path: Iterable[str],
                 normalize_domain: Callable[[str], str] = lambda d: d) -> None:
        self.label = label
        self.package = package
        self.path = list(path)
        self.normalize_domain = normalize_domain
        self.table: dict[tuple[str, str], list[Handler]] = {}
        """(domain, op type) -> handlers sorted by `since` (tests may patch entries)."""
        self.loaded = False

    def register(self, op_types: str | Sequence[str], since: int, domain: str,
                 const_inputs: Sequence[int] = (), fold: FoldFn | bool | None = None
                 ) -> Callable[[HandlerT], HandlerT]:
        """A decorator registering its function for `op_types` from version `since` on;
        ValueError when one of them already has a handler with that `since`."""
        types = [op_types] if isinstance(op_types, str) else list(op_types)
        key_domain = self.normalize_domain(domain)

        def register(fn: HandlerT) -> HandlerT:
            for t in types:
                entries = self.table.setdefault((key_domain, t), [])
                if any(h.since == since for h in entries):
                    raise ValueError(f"{self.label} handler for {t} since {since} registered "
                                     "twice")
                entries.append(Handler(t, key_domain, since, fn, tuple(const_inputs), fold,
                                       fn.__module__))
                entries.sort(key=lambda h: h.since)
            return fn

        return register

    def load_all(self) -> None:
        """Import every mapping module of the package and its sub-packages (idempotent).
        Modules and packages whose names start with "_" are helpers: they are neither
        imported nor searched (so `op_mappings/<format>/_x/` may hold helper modules of any
        name)."""
        if self.loaded:
            return
        self.loaded = True
        for name in mapping_modules(self.path, self.package):
            importlib.import_module(name)

    def lookup(self, op_type: str, domain: str, version: int) -> Handler | None:
        """The handler with the highest `since` <= version, or None."""
        self.load_all()
        best = None
        for h in self.table.get((self.normalize_domain(domain), op_type), ()):
            if h.since <= version:
                best = h
        return best

    def handlers(self) -> list[Handler]:
        """Every registered handler, sorted by (domain, op_type, since)."""
        self.load_all()
        return sorted((h for hs in self.table.values() for h in hs),
                      key=lambda h: (h.domain, h.op_type, h.since))

    def builtins(self) -> list[str]:
        """Names of the ops of the default domain ("") that have a handler."""
        return sorted({h.op_type for h in self.handlers() if h.domain == ""})

    def support_table(self) -> list[dict[str, Any]]:
        """One row per (domain, op type): the versions handled, the constant inputs and the
        restrictions (the handler's docstring)."""
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for h in self.handlers():
            row = rows.setdefault((h.domain, h.op_type), {
                "op_type": h.op_type, "domain": h.domain, "since": [], "const_inputs": [],
                "notes": h.doc})
            row["since"].append(h.since)
            row["const_inputs"] = sorted(set(row["const_inputs"]) | set(h.const_inputs))
        return list(rows.values())
