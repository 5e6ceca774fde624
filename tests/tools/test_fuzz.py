"""The in-repo fuzzer (tools/fuzz): the classifier, the traceback sites, the canary path
padding, the runner's limits, and small campaigns through `python -m tools.fuzz` (a fast one
that must complete, a slow fixed-seed one of 500 mutants that must find nothing but clean
rejections). The mutators: test_fuzz_mutators.py."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from tools.fuzz import seeds
from tools.fuzz.case import CANARY_TOKEN, Case, padded_path
from tools.fuzz.classify import (
    CAUSE_END,
    CAUSE_MARKER,
    NOT_CLEAN,
    Evidence,
    classify,
    control_char,
    normalize,
    site_of,
)
from tools.fuzz.minimize import minimize
from tools.fuzz.runner import Pool, Runner

ROOT = Path(__file__).resolve().parents[2]


def verdict(exit_code: int | None = 2, stderr: str = "", *, sig: int | None = None,
            timed_out: bool = False, command: str = "convert", **ev: object) -> str:
    return classify(command, exit_code, sig, timed_out, "", stderr,
                    Evidence(**ev)).cls  # type: ignore[arg-type]


# -- classification -----------------------------------------------------------------------


def test_one_plain_error_line_is_clean() -> None:
    assert verdict(2, "error: m/x.onnx is not a valid ONNX model\n") == "clean"
    assert verdict(1, "error: output y differs\n", command="validate") == "clean"
    assert verdict(0, "") == "ok"


def test_a_message_with_a_newline_is_multi_line() -> None:
    assert verdict(2, "error: bad name 'a\nb'\n") == "multi-line"
    assert verdict(2, "error: bad name 'a\u2028b'\n") == "multi-line"
    assert verdict(2, "error: bad\x1b[31m name\n") == "multi-line"
    assert verdict(2, "error: carriage\rreturn\n") == "multi-line"
    assert verdict(2, "error: one\nerror: two\n") == "multi-line"
    usage = ("Usage: webnn-convert convert [OPTIONS] MODEL\nTry 'webnn-convert convert -h'"
             "\n\nError: Invalid value for '--dim'\n")
    assert verdict(2, usage) == "multi-line"
    assert verdict(2, "") == "multi-line"  # failed without saying why
    assert control_char("tab\tis fine") is None
    assert control_char("nel\x85") == "U+0085"


def test_a_traceback_or_internal_error_is_internal() -> None:
    tb = ('Traceback (most recent call last):\n  File "/x/converter/a.py", line 3, in f\n'
          "ValueError: boom\n")
    assert verdict(1, tb) == "internal"
    assert verdict(2, "error: internal error: KeyError: 'x'\n") == "internal"
    assert verdict(2, "error: 1 node(s) could not be converted (Conv x1): [internal_error] "
                      "Conv 'c': IndexError: tuple index out of range\n") == "internal"


def test_signals_timeouts_memory_and_evidence() -> None:
    assert verdict(None, "Fatal Python error: Segmentation fault\n",
                   sig=signal.SIGSEGV) == "crash"
    assert verdict(None, "", sig=signal.SIGKILL) == "memory"
    assert verdict(2, "error: internal error: MemoryError: \n") == "memory"
    assert verdict(None, "terminate called after throwing an instance of "
                         "'std::bad_alloc'\n", sig=signal.SIGABRT) == "memory"
    assert verdict(None, "", sig=signal.SIGUSR1, timed_out=True) == "hang"
    assert verdict(3, "") == "crash"
    assert verdict(2, "error: x\n", canary_read="read") == "escape"
    assert verdict(0, "", outside_writes=["evil"]) == "escape"
    assert verdict(2, "error: x\n", leftovers=[".out.export-1"]) == "leftover"
    assert verdict(0, "", js_errors=["m.js: SyntaxError"]) == "js"


def test_a_contained_reference_crash_is_a_finding() -> None:
    # converter.core.isolate turns a native crash of the reference into one clean line; the
    # importer let that model through all the same, so a campaign must count it
    line = ("error: LiteRT crashed running m/x.tflite (SIGSEGV): the model is malformed or "
            "hits a LiteRT bug\n")
    assert verdict(2, line, command="validate") == "contained"
    assert "contained" in NOT_CLEAN
    assert verdict(2, "error: LiteRT failed running m/x.tflite: bad\n") == "clean"


def test_a_graph_convert_cannot_load_back_is_a_roundtrip_finding(tmp_path: Path) -> None:
    from tools.fuzz.classify import classify_load
    from tools.fuzz.runner import LOAD_CHECK, SubprocessRunner

    assert classify_load(0, None, False, "") is None
    (tmp_path / "x.webnn").write_text('webnn_graph "x" v1 {\n  inputs { x: f32[2]; }\n')
    result = SubprocessRunner(timeout=60).run([LOAD_CHECK, "x.webnn"], tmp_path)
    assert result.exit_code == 2
    found = classify_load(result.exit_code, result.signal, result.timed_out, result.stderr)
    assert found is not None and found.cls == "roundtrip"
    assert found.detail.startswith("error: cannot load the exported x.webnn")


def test_site_is_the_deepest_project_frame() -> None:
    root = ROOT
    tb = ("Traceback (most recent call last):\n"
          f'  File "{root}/cli/common.py", line 46, in handled\n    yield\n'
          f'  File "{root}/converter/io/serialize/loader.py", line 120, in load\n    x\n'
          '  File "/usr/lib/python3.11/json/decoder.py", line 5, in decode\n    y\n'
          "ValueError: boom\n")
    assert site_of(tb) == "converter/io/serialize/loader.py:120 (load)"
    dump = ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call "
            "first):\n"
            f'  File "{root}/op_mappings/onnx/conv.py", line 9 in conv\n'
            f'  File "{root}/converter/importer/loop.py", line 200 in _convert\n')
    assert site_of(dump) == "op_mappings/onnx/conv.py:9 (conv)"
    marked = (f"{CAUSE_MARKER}\nTraceback (most recent call last):\n"
              f'  File "{root}/op_mappings/tflite/reshape.py", line 38, in _fold\n'
              f"IndexError: x\n{CAUSE_END}\n" + tb)
    assert site_of(marked) == "op_mappings/tflite/reshape.py:38 (_fold)"
    assert normalize("tensor 'w' has 12 bytes") == "tensor '…' has N bytes"


# -- cases and the canary ---------------------------------------------------------------------


def test_canary_token_is_replaced_by_a_path_of_the_same_length(tmp_path: Path) -> None:
    case = Case(0, "onnx", "s", "a.txt", ["inspect", "m/a.txt"],
                {"a.txt": b"<" + CANARY_TOKEN.encode() + b">"},
                links={"l.bin": "{canary}", "r.bin": "../canary.bin"}, fifos=["p"])
    canary = case.materialize(tmp_path / "run")
    data = (tmp_path / "run" / "m" / "a.txt").read_bytes()
    assert len(data) == len(CANARY_TOKEN) + 2
    assert os.path.samefile(data[1:-1].decode(), canary)
    assert os.path.samefile(tmp_path / "run" / "m" / "l.bin", canary)
    assert os.path.samefile(tmp_path / "run" / "m" / "r.bin", canary)
    assert os.stat(canary).st_atime_ns == 0  # a read would move it
    for n in (40, 41, 160):
        p = padded_path("/tmp/abc/canary.bin", n)
        assert len(p) == n and os.path.normpath(p) == "/tmp/abc/canary.bin"
    with pytest.raises(ValueError):
        padded_path("/tmp/" + "x" * 200, 160)
    case.save(tmp_path / "saved")
    again = Case.load(tmp_path / "saved")
    assert again == case


def test_gather_sees_canary_reads_leftovers_and_writes_outside(tmp_path: Path) -> None:
    from tools.fuzz.campaign import check_js, gather
    from tools.fuzz.case import canary_content
    from tools.fuzz.mutators.common import HTML_MARK
    from tools.fuzz.runner import RunResult

    case = Case(0, "onnx", "s", "a.onnx", ["convert", "m/a.onnx", "-o", "out"],
                {"a.onnx": b"x"})
    failed = RunResult(case.argv, 2, None, False, 0.1, "", "error: x\n", 0)
    run = tmp_path / "r1"
    canary = case.materialize(run)
    ev = gather(case, run, failed, None)
    assert not ev.canary_read and not ev.leftovers and not ev.outside_writes
    canary.read_bytes()
    if os.stat(canary).st_atime_ns == 0:
        pytest.skip("this filesystem does not record access times")
    assert "access time" in gather(case, run, failed, None).canary_read
    run = tmp_path / "r2"
    case.materialize(run)
    (run / "out").mkdir()
    (run / "out" / "w.weights").write_bytes(b"WGWT" + canary_content()[:64])
    (run / ".out.export-abc").mkdir()
    (run / "evil.txt").write_text("")
    (run / "m" / "new.bin").write_text("")
    ev = gather(case, run, failed, None)
    assert "out/w.weights" in ev.canary_read
    assert ev.leftovers == [".out.export-abc", "out/"]
    assert ev.outside_writes == ["evil.txt", "m/new.bin"]
    (run / "out" / "x.html").write_text(f"<script>const n = '{HTML_MARK}';</script>")
    (run / "out" / "x.js").write_text("export function f( {\n")
    errors = check_js(run / "out", shutil.which("node"))
    assert errors[0].startswith("x.html: a name is written into the page unescaped")
    if shutil.which("node"):
        assert errors[1].startswith("x.js: ")


# -- runner ---------------------------------------------------------------------------------


class _Child(Runner):
    """A runner whose children do `action` instead of running the CLI."""

    mode = "test"

    def __init__(self, action: str, timeout: float = 20.0) -> None:
        super().__init__(timeout)
        self.action = action

    def spawn(self, argv: list[str], run_dir: Path) -> int:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.setpgid(0, 0)
                fd = os.open(run_dir / "stderr.txt", os.O_WRONLY | os.O_CREAT, 0o644)
                os.dup2(fd, 2)
                if self.action == "sleep":
                    time.sleep(60)
                elif self.action == "segv":
                    import faulthandler

                    faulthandler.disable()  # pytest's would print to the test's stderr
                    os.kill(os.getpid(), signal.SIGSEGV)
                elif self.action == "error":
                    os.write(2, b"error: nope\n")
                    os._exit(2)
            finally:
                os._exit(0)
        return pid


def test_pool_kills_a_hanging_child_at_the_time_limit(tmp_path: Path) -> None:
    """The child sleeps forever: the run returns only because the pool killed it."""
    result = _Child("sleep", timeout=0.5).run(["x"], tmp_path)
    assert result.timed_out and result.signal is not None


def test_pool_reports_signals_and_exit_codes(tmp_path: Path) -> None:
    pool = Pool(_Child("segv"), 2)
    for i in range(3):
        (tmp_path / str(i)).mkdir()
        pool.submit(i, ["x"], tmp_path / str(i))
    results = dict(pool.results())
    assert sorted(results) == [0, 1, 2]
    assert all(r.signal == signal.SIGSEGV for r in results.values())
    err = _Child("error").run(["x"], tmp_path / "0")
    assert err.exit_code == 2 and err.stderr == "error: nope\n"


def test_minimize_keeps_the_class(tmp_path: Path) -> None:
    """With a predicate that only needs one marker byte, bytes shrink to (almost) it."""
    case = Case(0, "weights", "s", "w.bin", ["run"], {"w.bin": b"a" * 300 + b"X" + b"b" * 300})
    from tools.fuzz.classify import Verdict

    def check(c: Case) -> Verdict:
        return Verdict("crash" if b"X" in c.files["w.bin"] else "clean", "killed by SIGSEGV")

    small = minimize(case, Verdict("crash", "killed by SIGSEGV"), check, seconds=20, runs=2000)
    assert b"X" in small.files["w.bin"] and len(small.files["w.bin"]) <= 40


def test_max_memory_caps_the_child_and_memory_error_is_a_finding(tmp_path: Path) -> None:
    """--max-memory parses sizes; a run that allocates past the cap (a 1 GiB constant the
    raised budgets allow, under a 512 MiB cap) ends in MemoryError: class 'memory', never
    'clean', although the CLI printed one error line."""
    from tools.fuzz.cli import _memory, _parser
    from tools.fuzz.runner import SubprocessRunner

    args = _parser().parse_args(["run", "--out", "x", "--max-memory", "512MiB"])
    assert _memory(args) == 512 << 20
    assert _memory(_parser().parse_args(["run", "--out", "x"])) == 4 << 30
    from onnx import TensorProto, helper, numpy_helper

    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    graph = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["s"], ["y"], name="n", value=value)], "g", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([16384, 16384], np.int64), "s")])
    (tmp_path / "m").mkdir()
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                    tmp_path / "m" / "big.onnx")
    result = SubprocessRunner(timeout=600, memory=512 << 20).run(
        ["convert", "m/big.onnx", "-o", "out", "--max-derived-bytes", "4GiB"], tmp_path)
    cls = classify("convert", result.exit_code, result.signal, result.timed_out,
                   result.stdout, result.stderr).cls
    assert cls == "memory", result.stderr


# -- campaigns --------------------------------------------------------------------------------


def _campaign(tmp_path: Path, count: int, seed: int, minimize_s: int) -> dict[str, Any]:
    out = tmp_path / "fuzz"
    proc = subprocess.run([sys.executable, "-m", "tools.fuzz", "run", "--seed", str(seed),
                           "--count", str(count), "--jobs", "2", "--out", str(out),
                           "--minimize-seconds", str(minimize_s), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    assert proc.returncode == (1 if summary["findings"] else 0)
    return summary


def test_fast_campaign(tmp_path: Path) -> None:
    """20 mutants through the real CLI: the machinery works end to end (findings are
    reported, not failed on: the slow campaign below is the gate)."""
    summary = _campaign(tmp_path, 20, seed=3, minimize_s=10)
    total = sum(n for row in summary["counts"].values() for n in row.values())
    assert total == 20 and summary["count"] == 20
    assert set(summary["counts"]) <= {"ok", "clean", "escape", "hang", "memory", "crash",
                                      "internal", "leftover", "js", "roundtrip", "multi-line"}
    lines = (tmp_path / "fuzz" / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 20
    for f in summary["findings"][:1]:
        proc = subprocess.run([sys.executable, "-m", "tools.fuzz", "repro", f["folder"]],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert "class: " in proc.stdout


def test_repro_runs_a_saved_case_again(tmp_path: Path, corpus: list[seeds.Seed]) -> None:
    seed = next(s for s in corpus if s.name == "tiny_cnn")
    case = Case(7, "onnx", "tiny_cnn", "tiny_cnn.onnx",
                ["convert", "m/tiny_cnn.onnx", "-o", "out", "--dim", "batch=1"],
                {"tiny_cnn.onnx": seed.files["tiny_cnn.onnx"][:300]})
    folder = tmp_path / "case"
    case.save(folder)
    (folder / "verdict.json").write_text(json.dumps({"class": "clean"}))
    proc = subprocess.run([sys.executable, "-m", "tools.fuzz", "repro", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "saved class: clean (reproduced)" in proc.stdout
    assert "command: webnn-convert convert m/tiny_cnn.onnx -o out --dim batch=1" in proc.stdout


@pytest.mark.slow
def test_campaign_of_500_mutants_is_clean(tmp_path: Path) -> None:
    """A fixed-seed campaign: every run must end in a result or one clean error line."""
    summary = _campaign(tmp_path, 500, seed=12, minimize_s=120)
    distinct = [f"{e['count']:3d} x {e['class']} {e['kind']}: {e['site'] or '-'} | "
                f"{e['detail'][:140]} | e.g. {e['example']}" for e in summary["signatures"]]
    assert not summary["findings"], (
        f"{len(summary['findings'])} non-clean runs ({len(distinct)} distinct; reproducers "
        "under the folders shown, `python -m tools.fuzz repro FOLDER`):\n" + "\n".join(distinct))
