"""Fixes: the conversion option settings that resolve (part of) an error, and how each
interface spells them.

A `Fix` is structured (option, name, axis, value). `render_fixes(fixes, interface)` writes
fixes as the user of `interface` types them: for "python" the keyword arguments of
`converter.convert()` (`free_dims={"batch": 1}`), for "cli" the flags of `webnn-convert`
(`--dim batch=1`); `render_option_names` spells the option names inside a free-text hint the
same way. Both spellings live here, in one table each, because the layers below the command
line show them too: `Fix.to_dict()` carries both, and front ends name both in notes meant
for either audience.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Interface = Literal["python", "cli"]
"""Who reads a message: a Python caller of the API or a user of the command line."""

OPTIONS = ("free_dims", "input_dims", "input_shapes", "pin_inputs")
"""The conversion options a `Fix` may set (keyword arguments of `converter.convert()`)."""

_FLAGS = {"free_dims": "--dim NAME=N", "input_dims": "--dim INPUT:AXIS=N",
          "input_shapes": "--shape INPUT=D1,D2,...", "pin_inputs": "--pin INPUT=VALUE",
          "allow_roots": "--allow-root DIR"}
_OPTION_WORD = re.compile(r"\b(" + "|".join(_FLAGS) + r")\b")
_INPUT_AXIS = re.compile(r"^.+:-?[0-9]+$")
"""A `--dim` key of this form means INPUT:AXIS, so named dimensions of this form need the
explicit `--free-dim` spelling."""

DIM_PLACEHOLDER = "N"
"""Stands for a dimension size the user has to choose."""
VALUE_PLACEHOLDER = "VALUE"
"""Stands for a pinned value the user has to choose."""


@dataclass(frozen=True)
class Fix:
    """One setting of a conversion option that resolves (part of) an error.

    `option` is one of `OPTIONS`; `name` is the free dimension's name (free_dims) or the
    input's name (the others); `axis` the axis (input_dims only); `value` the suggested
    value: an int for dimensions, a tuple of ints for input_shapes (None entries are
    placeholders), a number or list for pin_inputs; None means "choose one" (rendered as a
    placeholder). A fix with a placeholder cannot be applied as is.
    """

    option: str
    name: str
    axis: int | None = None
    value: Any = None

    def __post_init__(self) -> None:
        if self.option not in OPTIONS:
            raise ValueError(f"Fix.option must be one of {OPTIONS}, got {self.option!r}")
        if (self.option == "input_dims") != (self.axis is not None):
            raise ValueError("Fix.axis is set for input_dims fixes and only for them")
        object.__setattr__(self, "value", _frozen(self.value))

    @property
    def concrete(self) -> bool:
        """True when the fix suggests a value rather than a placeholder."""
        if self.option == "input_shapes":
            return self.value is not None and all(d is not None for d in self.value)
        return self.value is not None

    def cli(self) -> str:
        """The command-line flag, e.g. `--dim batch=1`, `--dim x:0=1`, `--shape x=1,3,8,8`,
        `--pin sr=16000`."""
        if self.option == "free_dims":
            flag = "--free-dim" if _INPUT_AXIS.match(self.name) else "--dim"
            return f"{flag} {_arg(f'{self.name}={_dim_text(self.value)}')}"
        if self.option == "input_dims":
            return f"--dim {_arg(f'{self.name}:{self.axis}={_dim_text(self.value)}')}"
        if self.option == "input_shapes":
            return f"--shape {_arg(f'{self.name}=' + ','.join(_shape_texts(self.value)))}"
        return f"--pin {_arg(f'{self.name}={_pin_text(self.value, cli=True)}')}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form with both renderings."""
        return {"option": self.option, "name": self.name, "axis": self.axis,
                "value": _thawed(self.value), "cli": self.cli(),
                "python": render_fixes([self], "python")}


def _frozen(value: Any) -> Any:
    """A hashable plain-Python copy of a value (numpy values and lists become tuples)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    return [_thawed(v) for v in value] if isinstance(value, tuple) else value


def _arg(text: str) -> str:
    """`text` quoted for a POSIX shell where it needs quoting (names with spaces, ...)."""
    return text if re.fullmatch(r"[\w.:=,/+@%-]+", text) else shlex.quote(text)


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


def _dim_text(value: Any) -> str:
    return DIM_PLACEHOLDER if value is None else str(int(value))


def _shape_texts(value: Any) -> list[str]:
    if value is None:
        return ["D1", "D2", "..."]
    return [f"D{i + 1}" if d is None else str(int(d)) for i, d in enumerate(value)]


def _pin_text(value: Any, *, cli: bool) -> str:
    if value is None:
        return VALUE_PLACEHOLDER
    plain = _thawed(value)
    if isinstance(plain, list) and cli and all(not isinstance(v, list) for v in plain):
        return ",".join(json.dumps(v, ensure_ascii=False) for v in plain)
    return json.dumps(plain, ensure_ascii=False)


def render_fixes(fixes: Iterable[Fix], interface: Interface) -> str:
    """The fixes as the user of `interface` types them: command-line flags separated by
    spaces, or keyword arguments (one per option, in `OPTIONS` order) separated by commas."""
    fixes = list(dict.fromkeys(fixes))
    if interface == "cli":
        return " ".join(f.cli() for f in fixes)
    parts = []
    for option in OPTIONS:
        mine = [f for f in fixes if f.option == option]
        if not mine:
            continue
        if option == "input_dims":
            axes: dict[str, list[str]] = {}
            for f in mine:
                axes.setdefault(f.name, []).append(f"{f.axis}: {_dim_text(f.value)}")
            body = ", ".join(f"{_key(k)}: {{{', '.join(v)}}}" for k, v in axes.items())
        elif option == "free_dims":
            body = ", ".join(f"{_key(f.name)}: {_dim_text(f.value)}" for f in mine)
        elif option == "input_shapes":
            body = ", ".join(f"{_key(f.name)}: [{', '.join(_shape_texts(f.value))}]"
                             for f in mine)
        else:
            body = ", ".join(f"{_key(f.name)}: {_pin_text(f.value, cli=False)}"
                             for f in mine)
        parts.append(f"{option}={{{body}}}")
    return ", ".join(parts)


def render_option_names(text: str, interface: Interface) -> str:
    """`text` with the option names of `OPTIONS` spelled for `interface` (the flags on the
    command line; unchanged for Python)."""
    if interface == "python":
        return text
    return _OPTION_WORD.sub(lambda m: _FLAGS[m.group(1)], text)


ALL_LISTED: dict[Interface, str] = {"python": "ConversionFailed.errors", "cli": "--json"}
"""Where each interface finds every node error of a failed conversion (its message lists
the first ones)."""
