"""The `webnn-convert` console entry point: signal handling first, then the CLI.

It installs the process-lifetime SIGINT / SIGTERM handling (`cli.signals`) before importing
anything slow (click, numpy, onnx and the commands take about a second to import), runs
`cli.main.main`, and leaves through `cli.signals.finish`. So an interruption at any moment,
the imports and the way out included, ends the process with exit code 130 (SIGINT) or 143
(SIGTERM) and one `error: interrupted` / `error: terminated` line, never a traceback.

Only this module is light to import (the standard library's `os`, `signal`, `sys`);
`cli.main.main` stays the in-process entry (tests, `python -m cli.main`) and raises
SystemExit as click does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from cli import signals


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run `webnn-convert` with `argv` (default: the command line) and exit."""
    signals.install()
    signals.finish(_run(list(argv) if argv is not None else sys.argv[1:]))


def _load() -> Callable[[Sequence[str] | None], None]:
    from cli.main import main as cli_main

    return cli_main


def _run(argv: list[str]) -> int:
    """The exit code of the CLI on `argv` (an interruption during the import: 130 / 143)."""
    try:
        cli_main = signals.raising_call(_load)
        cli_main(argv)
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        return 130
    except BaseException:  # noqa: BLE001 - a bug escaped the commands: shown as Python would
        if signals.received():  # the interruption in disguise: `finish` reports it
            return 1
        import traceback

        traceback.print_exc()
        return 1
    return 0


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    main()
