"""Budgets through the real command line: every tiny hostile model of
`tests/converter/hostile_models.py` (gigabytes of folded constants, a billion loop iterations,
nested loops, deep If nesting, a 65,536-step GRU, a TFLite WHILE counting to a billion) is
rejected by `webnn-convert convert` in a subprocess whose address space is capped at 2 GiB:
exit code 2, one `error:` line naming the budget's flag, within a few CPU seconds. The same
models in a moderate size are rejected under a lowered budget and converted once the flag
raises it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from converter.core.budgets import SPECS
from tests.converter.hostile_models import HOSTILE, LOWERED, MODERATE, save
from tests.timing import HANG_GUARD_S, cpu_seconds

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 2 << 30
"""RLIMIT_AS of the subprocess: a model that allocated what it asks for would die of it."""
CPU_SECONDS = 10.0
"""CPU time (user + system) of the CLI's process allowed per rejected model, interpreter start
included (about 1 s of it): a model that did the work it asks for would take hours."""

_RUN = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from cli.main import main
sys.argv = ["webnn-convert", *sys.argv[1:]]
main()
"""


def _cli(*args: object) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the CLI in a capped subprocess; (the process, its CPU seconds)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with cpu_seconds(children=True) as spent:
        proc = subprocess.run([sys.executable, "-c", _RUN.format(cap=MEMORY_CAP),
                               *(str(a) for a in args)], env=env, capture_output=True,
                              text=True, timeout=HANG_GUARD_S)
    return proc, spent.seconds


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_model_is_rejected_quickly(name: str, tmp_path: Path) -> None:
    _, amount, budget = HOSTILE[name]
    model = save(name, amount, tmp_path)
    assert model.stat().st_size < 4096  # a tiny file
    proc, seconds = _cli("convert", model, "-o", tmp_path / "out")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    flag = SPECS[budget].flag
    assert f"raise it with {flag})" in lines[0]
    assert "over the budget of" in lines[0]
    assert "MemoryError" not in lines[0] and "not a valid" not in lines[0]
    assert seconds < CPU_SECONDS, f"{name} took {seconds:.1f} CPU seconds"
    assert not (tmp_path / "out").exists()


def test_hostile_model_json_error(tmp_path: Path) -> None:
    model = save("constant_of_shape", HOSTILE["constant_of_shape"][1], tmp_path)
    result = CliRunner().invoke(cli, ["convert", str(model), "-o", str(tmp_path / "o"),
                                      "--json"])
    assert result.exit_code == 2
    import json

    error = json.loads(result.stdout)["error"]
    assert error["reason_code"] == "budget_exceeded"
    assert error["budget"] == "max_constant_bytes"
    assert error["amount"] == 100_000 * 21_000 * 4
    assert error["limit"] == 2 << 30
    assert error["hint"] == "raise it with --max-constant-bytes"
    assert error["op_type"] == "ConstantOfShape" and error["node_name"] == "n"


@pytest.mark.parametrize("name", sorted(MODERATE))
def test_flag_lowers_and_raises_the_budget(name: str, tmp_path: Path) -> None:
    amount, raised = MODERATE[name]
    model = save(name, amount, tmp_path)
    runner = CliRunner()
    low = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / "low"),
                              *LOWERED[name]])
    assert low.exit_code == 2, low.output
    assert f"raise it with {LOWERED[name][0]}" in low.stderr
    high = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / "high"), *raised])
    assert high.exit_code == 0, high.output


@pytest.mark.parametrize(("flag", "value", "problem"), [
    ("--max-constant-bytes", "2XB", "is not a size"),
    ("--max-constant-bytes", "0", "must be positive"),
    ("--max-trip-count", "1.5", "is not a positive integer"),
    ("--max-nesting", "-3", "is not a positive integer"),
])
def test_bad_budget_values_exit_2(flag: str, value: str, problem: str, tmp_path: Path) -> None:
    model = save("loop", 3, tmp_path)
    result = CliRunner().invoke(cli, ["convert", str(model), "-o", str(tmp_path / "o"), flag,
                                      value])
    assert result.exit_code == 2
    assert problem in result.output and flag in result.output


def test_sizes_accept_units(tmp_path: Path) -> None:
    model = save("constant_of_shape", 10, tmp_path)  # 840,000 bytes
    runner = CliRunner()
    for ok in ("1MB", "1MiB", "0.9MB", "840000", "1m"):
        result = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / ok),
                                     "--max-constant-bytes", ok])
        assert result.exit_code == 0, (ok, result.output)
    result = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / "small"),
                                 "--max-constant-bytes", "800kB"])
    assert result.exit_code == 2 and "820.3 KiB (840,000 bytes)" in result.stderr


def test_validate_and_inspect_take_budget_flags(tmp_path: Path) -> None:
    model = save("loop", 50, tmp_path)
    runner = CliRunner()
    low = runner.invoke(cli, ["validate", str(model), "--max-trip-count", "49"])
    assert low.exit_code == 2 and "--max-trip-count" in low.stderr
    assert runner.invoke(cli, ["validate", str(model), "--max-trip-count", "50"]).exit_code == 0
    assert runner.invoke(cli, ["inspect", str(model), "--max-constant-bytes", "1GiB"]
                         ).exit_code == 0


def test_export_budget(tmp_path: Path) -> None:
    model = save("constant_of_shape", 100, tmp_path)  # 8.4 MB of weights
    runner = CliRunner()
    low = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / "low"), "--format",
                              "all", "--max-export-bytes", "10MB"])
    assert low.exit_code == 2, low.output
    assert "the all export would write about" in low.stderr
    assert "--max-export-bytes" in low.stderr
    assert not (tmp_path / "low").exists()
    ok = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / "ok"), "--format",
                             "webnn", "--max-export-bytes", "10MB"])
    assert ok.exit_code == 0, ok.output
