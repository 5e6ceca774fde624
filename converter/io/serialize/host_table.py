"""`<stem>.host.json`: the host steps of an export (docs/host-steps.md), next to the graph.

The file is `HostSteps.to_json()` (`converter.results.host_steps`, the contract the
JavaScript module reads too) plus two keys that describe the whole model, which the graph
file alone cannot say (a boundary value may also be a model output, a bool travels as uint8):

    "modelInputs":  [{"name": "image", "dataType": "float32"}, ...]
    "modelOutputs": [{"name": "boxes", "dataType": "float32"}, ...]   (model order)

`write_host(steps, inputs, outputs, folder, stem)` writes it; `read_host(path)` reads one;
`load_host(graph_path)` finds `<stem>.host.json` beside a graph file (None when there is
none), confined to the graph's folder like the weights (`converter.core.confine`).

Restrictions (a `WebnnFormatError` naming the file, one line): at most `MAX_HOST_BYTES`; the
JSON form must pass `HostSteps.from_json` (types, sizes, names, known ops, every value
defined before use); model input and output entries are names with a data type of
`converter.results.host_steps.DATA_TYPES` (or "unknown"), each named once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converter.core.confine import confined
from converter.core.files import FileTooLarge, NotRegularFile, read_bounded
from converter.core.ir import ValueInfo
from converter.io.serialize.errors import WebnnFormatError
from converter.results.host_steps import DATA_TYPES, HostSteps, HostStepsError

HOST_SUFFIX = ".host.json"
MAX_HOST_BYTES = 512 << 20
"""The largest `.host.json` read (its constants are base64 in it)."""
MAX_MODEL_VALUES = 100_000
_NAME_CHARS = 1_024


@dataclass(frozen=True, eq=False)
class HostFile:
    """A read `.host.json`: the steps and the model's inputs and outputs (source names and
    data types; shapes are not recorded: None)."""

    steps: HostSteps
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]


def host_json(steps: HostSteps, inputs: Sequence[ValueInfo], outputs: Sequence[ValueInfo]
              ) -> dict[str, Any]:
    """The file's JSON object (see the module docstring)."""
    def entry(vi: ValueInfo) -> dict[str, str]:
        return {"name": vi.name, "dataType": vi.dtype if vi.dtype in DATA_TYPES else "unknown"}
    return {**steps.to_json(), "modelInputs": [entry(vi) for vi in inputs],
            "modelOutputs": [entry(vi) for vi in outputs]}


def write_host(steps: HostSteps, inputs: Sequence[ValueInfo], outputs: Sequence[ValueInfo],
               folder: str | os.PathLike[str], stem: str) -> Path:
    """Write `<stem>.host.json` into `folder`; returns its path."""
    path = Path(folder) / f"{stem}{HOST_SUFFIX}"
    text = json.dumps(host_json(steps, inputs, outputs), allow_nan=False,
                      separators=(",", ":"))
    path.write_text(text, encoding="utf-8")
    return path


def read_host(path: str | os.PathLike[str]) -> HostFile:
    """The `HostFile` of a `.host.json` (see the module docstring for what is checked)."""
    where = str(path)
    try:
        data = json.loads(read_bounded(path, MAX_HOST_BYTES, "the host steps file"))
    except (FileTooLarge, NotRegularFile) as e:
        raise WebnnFormatError(str(e), where) from None
    except OSError as e:
        raise WebnnFormatError(f"cannot read: {e.strerror or e}", where) from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise WebnnFormatError(f"invalid JSON ({str(e).splitlines()[0][:200]})", where
                               ) from None
    if not isinstance(data, dict):
        raise WebnnFormatError("the host steps file must be a JSON object", where)
    try:
        steps = HostSteps.from_json(data)
    except HostStepsError as e:
        raise WebnnFormatError(str(e), where) from None
    return HostFile(steps, _values(data.get("modelInputs"), "modelInputs", where),
                    _values(data.get("modelOutputs"), "modelOutputs", where))


def _values(items: Any, key: str, where: str) -> tuple[ValueInfo, ...]:
    if not isinstance(items, list) or len(items) > MAX_MODEL_VALUES:
        raise WebnnFormatError(f"{key} must be a list of at most {MAX_MODEL_VALUES} "
                               "entries", where)
    out: list[ValueInfo] = []
    for i, item in enumerate(items):
        name = item.get("name") if isinstance(item, dict) else None
        dtype = item.get("dataType") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name or len(name) > _NAME_CHARS \
                or not isinstance(dtype, str) or (dtype not in DATA_TYPES
                                                  and dtype != "unknown"):
            raise WebnnFormatError(f"{key}[{i}] must be {{\"name\": text, \"dataType\": "
                                   f"one of {', '.join(DATA_TYPES)}}}", where)
        out.append(ValueInfo(name, dtype, None))
    if len({vi.name for vi in out}) != len(out):
        raise WebnnFormatError(f"{key} names a value twice", where)
    return tuple(out)


def host_path(graph_path: Path, stem: str) -> Path:
    """Where the `.host.json` of graph file `graph_path` (stem `stem`) lies."""
    return graph_path.parent / f"{stem}{HOST_SUFFIX}"


def load_host(graph_path: str | os.PathLike[str], stem: str) -> HostFile | None:
    """The `HostFile` beside graph file `graph_path` (`<stem>.host.json`), None when there is
    none; confined to the graph's folder (`PathOutsideFolder` for a symlink leading out)."""
    path = host_path(Path(graph_path), stem)
    if not os.path.lexists(path):
        return None
    confined(path, Path(graph_path).parent, "the host steps file")
    return read_host(path)


__all__ = ["HOST_SUFFIX", "MAX_HOST_BYTES", "HostFile", "host_json", "host_path", "load_host",
           "read_host", "write_host"]
