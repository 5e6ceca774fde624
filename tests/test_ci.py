"""CI runs what the README promises: `.ci/run` runs README command 2 exactly as written, as its
first command (nothing installed before it), and README command 1 too."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _commands(text: str) -> list[str]:
    """The shell lines of a script that do something (no comments, no blanks)."""
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return [line for line in readme.splitlines() if line.startswith("python3 -m venv .venv")]


def test_readme_has_the_two_setup_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2, commands
    assert " pip install . " in commands[0] and "webnn-convert convert" in commands[0]
    assert 'pip install -e ".[test]"' in commands[1] and commands[1].endswith("pytest -n 2 -q")


def test_ci_runs_readme_command_2_first_and_verbatim() -> None:
    script = _commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    setup = [line for line in script if not line.startswith(("set ", "cd "))]
    assert setup[0] == _readme_commands()[1]


def test_ci_runs_readme_command_1() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    pattern = re.search(r"grep -m1 -F '([^']+)' README\.md", script)
    assert pattern, "CI does not pick command 1 out of the README"
    assert _readme_commands()[0].startswith(pattern.group(1))
    assert 'eval "$command_1"' in script
