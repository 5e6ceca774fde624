"""Budgets: how much work and memory one conversion may spend, in one table.

Models come from strangers: a 200-byte ONNX file can ask for gigabytes of folded constants
(ConstantOfShape, Expand, Tile, Range, Pad, Resize, OneHot, sparse initializers) or for
millions of unrolled loop iterations. Every such amount is checked against a budget BEFORE
the memory is allocated or the loop unrolled, and a model over a budget fails with one
`BudgetExceeded` line naming the budget, the amount and the flag that raises it:

```python
from converter.api import Budgets, convert
result = convert("big.onnx", budgets=Budgets(max_constant_bytes="4GiB", max_trip_count=10_000))
```

`BUDGETS` describes every field (default, command-line flag, what it bounds); the "Budgets"
table of docs/security.md (between the `budgets-table` markers) is generated from the same
descriptions. Byte budgets accept sizes as ints or strings (`parse_size`: "2GiB", "500MB",
"1.5G", "4096"); count budgets ints (or "65536", "64k").

Two budgets bound running a converted graph rather than converting it
(`converter.core.webnn.run_memory`): `max_tensor_bytes`, the largest single tensor of a run (an input, a
constant, an operation's output), and `max_run_bytes`, the estimated peak of a run (inputs
and constants plus the operation outputs alive at once). Every WebNN operand has a static
shape, so both are exact sums known once the graph is built, and they are checked before
anything executes it: the reference framework (onnxruntime / LiteRT) in `validate`, our
backends, `run`, the zoo, the real browser. The single tensor is the one allocation no
backend avoids (a 200-byte Expand asking for 96 GiB); the peak catches many large values at
once. Their defaults, like the constant budgets', are several times what the largest real
model in models/ needs (VGG-19: a 392 MiB constant, a 573 MiB peak) and the tensor budget
equals the constant one, so a graph whose conversion passed the constant budgets can run.

`using(budgets)` makes a `Budgets` the active one for the code it wraps (a context
variable): readers deep inside a front end (sparse tensors of ONNX attributes, TFLite sparse
buffers) consult `active()`. `converter.convert()` / `validate()` set it; the importer gets
it explicitly (`Importer(..., budgets=...)`, `ImportContext.budgets`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from typing import Any

from converter.core.errors import BudgetExceeded

KiB, MiB, GiB, TiB = 1 << 10, 1 << 20, 1 << 30, 1 << 40


@dataclass(frozen=True)
class BudgetSpec:
    """One budget: its field `name`, command-line `flag`, `unit` ("bytes" or the counted
    thing, e.g. "nodes"), `scope` (what one amount is measured over, for messages: "one
    constant") and `help` (what it bounds and where it is checked)."""

    name: str
    flag: str
    unit: str
    scope: str
    help: str

    @property
    def is_bytes(self) -> bool:
        return self.unit == "bytes"


def _spec(flag: str, unit: str, scope: str, help: str) -> dict[str, Any]:
    return {"budget": (flag, unit, scope, help)}


@dataclass(frozen=True)
class Budgets:
    """The limits of one conversion (see the module docstring); every field is a positive
    int (byte fields also accept size strings such as "2GiB")."""

    max_constant_bytes: int = field(default=2 * GiB, metadata=_spec(
        "--max-constant-bytes", "bytes", "one constant",
        "one constant made at conversion time: a folded value (ConstantOfShape, Expand, Tile, "
        "Range, Pad, Resize, OneHot, Gather, Concat, ... and every op folded on the "
        "reference backend, each intermediate value included), a constant a handler builds "
        "(index tables, masks, interpolation matrices), a densified sparse tensor (ONNX "
        "sparse initializers and attributes, TFLite sparse buffers)"))
    max_total_constant_bytes: int = field(default=16 * GiB, metadata=_spec(
        "--max-total-constant-bytes", "bytes", "all constants of one conversion",
        "every value folded at conversion time plus every constant of the graph being built "
        "(its weights), added up over the conversion"))
    max_unrolled_nodes: int = field(default=65536, metadata=_spec(
        "--max-unrolled-nodes", "nodes", "unrolled loops",
        "source nodes converted inside the bodies of unrolled loops (ONNX Loop and Scan, "
        "TFLite WHILE), nested loops included, over the whole conversion: checked before a "
        "loop starts (iterations x body nodes), before each iteration (the iterations left at "
        "the pace of those done) and at each node"))
    max_trip_count: int = field(default=4096, metadata=_spec(
        "--max-trip-count", "iterations", "one loop",
        "iterations of one unrolled loop: the ONNX Loop trip count M, the Scan length (batch x "
        "length for Scan-8), the iterations of a TFLite WHILE"))
    max_recurrent_steps: int = field(default=8192, metadata=_spec(
        "--max-recurrent-steps", "time steps", "one recurrent op",
        "the sequence length of a recurrent op decomposed from primitives, which is unrolled "
        "step by step (ONNX RNN/GRU/LSTM that WebNN's gru/lstm cannot express, TFLite "
        "LSTM/RNN sequences): each step adds about ten graph operations"))
    max_nodes: int = field(default=250_000, metadata=_spec(
        "--max-nodes", "nodes", "one conversion",
        "source nodes one conversion would meet, counted when the model is read, before "
        "anything is converted: the nodes of the main graph plus those of every subgraph "
        "(ONNX If branches, Loop/Scan bodies, TFLite IF/WHILE/CALL_ONCE subgraphs) and "
        "model-local function body, each counted once per place it is inlined (loop bodies "
        "once; unrolling is --max-unrolled-nodes)"))
    max_inlined_nodes: int = field(default=65536, metadata=_spec(
        "--max-inlined-nodes", "nodes", "subgraphs and function bodies",
        "the part of --max-nodes inside subgraphs and function bodies, counted before "
        "anything is converted: a tree of nested If nodes or a function calling functions "
        "asks for work that grows with every level while the file stays small"))
    max_derived_bytes: int = field(default=64 * MiB, metadata=_spec(
        "--max-derived-bytes", "bytes", "derived constants",
        "constants a model derives at conversion time beyond what its file stores (folded "
        "values, densified sparse tensors, zero-filled variable tensors, constants handlers "
        "build): each one, and all of them added up, may take this plus --max-derived-ratio "
        "times the model's size (its file, or its weights when they are larger), so a tiny "
        "file cannot ask for gigabytes; checked with --max-constant-bytes, before allocating"))
    max_derived_ratio: int = field(default=32, metadata=_spec(
        "--max-derived-ratio", "x the model's size", "derived constants",
        "how many times the model's size its derived constants may take on top of "
        "--max-derived-bytes (see there)"))
    max_manifest_bytes: int = field(default=1 * MiB, metadata=_spec(
        "--max-manifest-bytes", "bytes", "one manifest",
        "the JSON manifest of an exported graph's weights blob (`.manifest.json`), checked "
        "before it is parsed: this plus 16 times the size of the weights file it describes "
        "(an honest entry takes about 150 bytes per tensor)"))
    max_nesting: int = field(default=16, metadata=_spec(
        "--max-nesting", "levels", "nesting",
        "how deeply function bodies and subgraphs (ONNX If/Loop/Scan bodies, TFLite "
        "subgraphs) may nest inside each other"))
    max_export_bytes: int = field(default=32 * GiB, metadata=_spec(
        "--max-export-bytes", "bytes", "one export",
        "bytes an export writes, estimated before writing: the graph's constants once per "
        "file that carries them (weights blob, safetensors, ONNX) plus the graph text"))
    max_tensor_bytes: int = field(default=2 * GiB, metadata=_spec(
        "--max-tensor-bytes", "bytes", "one tensor of a run",
        "one tensor of a run (a graph input, a constant, an operation's output), known from "
        "the converted graph's static shapes and checked before anything runs it: before "
        "validate runs the original in onnxruntime / LiteRT, before our backends, `run`, the "
        "zoo or the real browser run the graph"))
    max_run_bytes: int = field(default=32 * GiB, metadata=_spec(
        "--max-run-bytes", "bytes", "one run",
        "the estimated peak of one run, checked with --max-tensor-bytes: inputs and "
        "constants plus the operation outputs alive at once in topological order (each "
        "until its last reader; validate's divergence search keeps every value, and is "
        "skipped with a note when that is over)"))

    source_bytes: int | None = field(default=None, compare=False, repr=False)
    """The size of the model being converted (`for_source`): with it, every one-constant
    check (`check("max_constant_bytes", ...)`) also checks the derived-constant limit
    (`derived_limit`). Not a budget: no flag, not in `BUDGETS`."""

    def __post_init__(self) -> None:
        for spec in BUDGETS:
            raw = getattr(self, spec.name)
            value = parse_size(raw, spec.flag) if spec.is_bytes else parse_count(raw, spec.flag)
            object.__setattr__(self, spec.name, value)

    def with_(self, **changes: Any) -> Budgets:
        """A copy with some fields changed (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def for_source(self, size: int) -> Budgets:
        """A copy that knows the model's size in bytes (`source_bytes`): derived constants
        are then bounded relative to it (`derived_limit`)."""
        return replace(self, source_bytes=max(int(size), 0))

    def derived_limit(self) -> int | None:
        """Bytes the model may derive (each derived constant and all of them together):
        `max_derived_bytes + max_derived_ratio x source_bytes`; None while the model's size
        is unknown."""
        if self.source_bytes is None:
            return None
        return int(self.max_derived_bytes) + int(self.max_derived_ratio) * self.source_bytes

    def check(self, name: str, amount: int, subject: str) -> None:
        """Raise `BudgetExceeded` when `amount` is over budget `name`. `subject` starts the
        message and is followed by the amount: "the folded constant would take" ->
        "the folded constant would take 7.8 GiB, over the budget of 2 GiB for one constant".
        A one-constant check (`max_constant_bytes`) also checks the derived limit once the
        model's size is known (`for_source`)."""
        limit = int(getattr(self, name))
        if amount > limit:
            raise over_budget(name, amount, limit, subject)
        if name == "max_constant_bytes":
            self.check_derived(amount, subject)

    def check_derived(self, amount: int, subject: str) -> None:
        """Raise `BudgetExceeded` when `amount` derived bytes (one constant, or the sum so
        far) are over `derived_limit` (nothing while the model's size is unknown)."""
        limit = self.derived_limit()
        if limit is not None and amount > limit:
            raise over_derived(self, amount, limit, subject)

    def to_dict(self) -> dict[str, int]:
        return {spec.name: int(getattr(self, spec.name)) for spec in BUDGETS}


BUDGETS: tuple[BudgetSpec, ...] = tuple(
    BudgetSpec(f.name, *f.metadata["budget"]) for f in fields(Budgets) if "budget" in f.metadata)
"""Every budget in field order."""
SPECS: Mapping[str, BudgetSpec] = {s.name: s for s in BUDGETS}
RUN_BUDGETS = ("max_tensor_bytes", "max_run_bytes")
"""The budgets of running a converted graph (`converter.core.webnn.run_memory`)."""
READ_BUDGETS = ("max_manifest_bytes",)
"""The budgets of reading an exported graph (`converter.io.serialize`)."""
CONVERSION_BUDGETS: tuple[str, ...] = tuple(
    s.name for s in BUDGETS
    if s.name not in (*RUN_BUDGETS, *READ_BUDGETS, "max_export_bytes"))
"""The budgets of converting a model: the flags every model-reading command has
(`cli.common.model_options`); the export, run and read budgets are their commands' own."""


def amount_text(spec: BudgetSpec, amount: int) -> str:
    """"7.8 GiB" for a byte budget, "1,000,000 nodes" for a count."""
    return format_bytes(amount) if spec.is_bytes else f"{amount:,} {spec.unit}"


def over_budget(name: str, amount: int, limit: int, subject: str) -> BudgetExceeded:
    """The `BudgetExceeded` error for `amount` over budget `name` (see `Budgets.check`)."""
    spec = SPECS[name]
    exact = f" ({amount:,} bytes)" if spec.is_bytes and amount >= KiB else ""
    message = (f"{subject} {amount_text(spec, amount)}{exact}, over the budget of "
               f"{amount_text(spec, limit)} for {spec.scope}")
    return BudgetExceeded(message, budget=name, flag=spec.flag, amount=amount, limit=limit)


def over_derived(budgets: Budgets, amount: int, limit: int, subject: str) -> BudgetExceeded:
    """The error of `amount` derived bytes over `limit` (`Budgets.check_derived`): it names
    the model's size and both flags that raise the limit."""
    size = budgets.source_bytes or 0
    exact = f" ({amount:,} bytes)" if amount >= KiB else ""
    message = (f"{subject} {format_bytes(amount)}{exact}, over the budget of "
               f"{format_bytes(limit)} for constants derived from a model of "
               f"{format_bytes(size)} ({format_bytes(int(budgets.max_derived_bytes))} + "
               f"{int(budgets.max_derived_ratio)} x its size)")
    return BudgetExceeded(
        message, budget="max_derived_bytes", flag="--max-derived-bytes", amount=amount,
        limit=limit,
        hint_cli="raise it with --max-derived-bytes or --max-derived-ratio",
        hint_python="raise it with budgets=Budgets(max_derived_bytes=...) or "
                    "max_derived_ratio=...")


def out_of_memory(budgets: Budgets | None = None, during: str = "the conversion"
                  ) -> BudgetExceeded:
    """The error a MemoryError becomes: it names the memory budgets, which stop a model
    earlier with a clear message when lowered."""
    b = budgets or active()
    return BudgetExceeded(
        f"{during} ran out of memory (MemoryError); the budgets allowed "
        f"{format_bytes(b.max_constant_bytes)} per constant and "
        f"{format_bytes(b.max_total_constant_bytes)} in total",
        budget=None, flag="--max-constant-bytes / --max-total-constant-bytes",
        hint_cli="lower --max-constant-bytes or --max-total-constant-bytes to stop earlier, "
                 "or free memory",
        hint_python="lower budgets=Budgets(max_constant_bytes=..., "
                    "max_total_constant_bytes=...) to stop earlier, or free memory")


# -- parsing and formatting ----------------------------------------------------------------

_UNITS = {"": 1, "b": 1, "k": KiB, "kb": 1000, "kib": KiB, "m": MiB, "mb": 1000**2,
          "mib": MiB, "g": GiB, "gb": 1000**3, "gib": GiB, "t": TiB, "tb": 1000**4,
          "tib": TiB}
_SIZE = re.compile(r"^\s*([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")
_COUNT_UNITS = {"": 1, "k": 1000, "m": 1000**2}


def parse_size(value: Any, what: str = "size") -> int:
    """Bytes from an int or a string: "4096", "500MB" (decimal: kB/MB/GB/TB), "2GiB"
    (binary: KiB/MiB/GiB/TiB; K/M/G/T alone are binary too), "1.5GiB". ValueError unless
    positive."""
    return _parse(value, what, _UNITS, "a size such as 2GiB, 500MB or 1048576")


def parse_count(value: Any, what: str = "count") -> int:
    """A positive count from an int or a string ("65536", "64k", "1M": decimal)."""
    return _parse(value, what, _COUNT_UNITS, "a positive integer such as 4096 or 64k")


def _parse(value: Any, what: str, units: Mapping[str, int], expected: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected {expected}, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        m = _SIZE.match(value)
        unit = m.group(2).lower() if m else ""
        if m is None or unit not in units:
            raise ValueError(f"{what}: {value!r} is not {expected}")
        exact = float(m.group(1).replace("_", "").replace(",", "")) * units[unit]
        if units is _COUNT_UNITS and not exact.is_integer():
            raise ValueError(f"{what}: {value!r} is not {expected}")
        number = math.floor(exact)
    else:
        raise ValueError(f"{what}: expected {expected}, got {type(value).__name__}")
    if number < 1:
        raise ValueError(f"{what}: {value!r} must be positive")
    return number


def format_bytes(n: int) -> str:
    """`n` bytes for a message: "512 bytes", "2 GiB", "7.8 GiB"."""
    if n < KiB:
        return f"{n} bytes"
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size:
            value = n / size
            text = f"{value:.0f}" if n % size == 0 else f"{value:.1f}"
            return f"{text} {unit}"
    return f"{n} bytes"  # unreachable


def nbytes(shape_or_count: Any, itemsize: int) -> int:
    """Bytes of `shape_or_count` (a shape or an element count) elements of `itemsize` bytes,
    as an exact Python int (no overflow for absurd shapes; negative dimensions count 0)."""
    if isinstance(shape_or_count, int):
        count = max(shape_or_count, 0)
    else:
        count = 1
        for d in shape_or_count:
            count *= max(int(d), 0)
    return count * int(itemsize)


# -- the active budgets ----------------------------------------------------------------------

DEFAULTS = Budgets()
"""The default budgets."""

_ACTIVE: ContextVar[Budgets] = ContextVar("budgets", default=DEFAULTS)


def active() -> Budgets:
    """The budgets of the conversion running in this context (`using`), else the defaults."""
    return _ACTIVE.get()


@contextmanager
def using(budgets: Budgets | None) -> Iterator[Budgets]:
    """Within the block, `active()` is `budgets` (unchanged when None)."""
    if budgets is None:
        yield active()
        return
    if not isinstance(budgets, Budgets):
        raise TypeError(f"budgets must be a converter.core.budgets.Budgets, got "
                        f"{type(budgets).__name__}")
    token = _ACTIVE.set(budgets)
    try:
        yield budgets
    finally:
        _ACTIVE.reset(token)


def markdown_table() -> str:
    """The budget table of docs/security.md, between its `<!-- budgets-table:start -->` and
    `<!-- budgets-table:end -->` markers (one row per budget; a test checks it is current)."""
    rows = ["| Budget (Python field) | Flag | Default | What it bounds |", "|---|---|---|---|"]
    for spec in BUDGETS:
        default = int(getattr(DEFAULTS, spec.name))
        rows.append(f"| `{spec.name}` | `{spec.flag}` | {amount_text(spec, default)} | "
                    f"{spec.help} |")
    return "\n".join(rows)
