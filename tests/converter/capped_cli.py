"""The CLI run in a child whose address space is capped at 4 GiB (`capped_cli`: exit code,
stderr and the child's peak RSS), the check that it refused with one line naming a flag
(`refused`), and the one-graph ONNX models (`one_graph_model`, `save`) of the amplification
tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from tests.memory import PEAK_FILE_VAR, PEAK_HOOK, peak_kib
from tests.timing import HANG_GUARD_S

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 4 << 30
PEAK_RSS_KB = 500 * 1024
"""The child's peak resident memory allowed for a refused model (the interpreter with onnx,
numpy and the converter takes about 200 MB)."""
OPSET = [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]

RUN = PEAK_HOOK + """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from cli.main import main
sys.argv = ["webnn-convert", *sys.argv[1:]]
main()
"""


def capped_cli(*args: object) -> tuple[int, str, int]:
    """Run the CLI in a capped child: (exit code, stderr, the child's own peak RSS in KiB,
    which it writes at exit: `tests.memory`)."""
    import tempfile
    import time

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    peak = tempfile.NamedTemporaryFile(delete=False)
    peak.close()
    env[PEAK_FILE_VAR] = peak.name
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", RUN.format(cap=MEMORY_CAP),
                                 *(str(a) for a in args)], env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + HANG_GUARD_S  # a hang guard only
        while True:
            pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"hung: {args}")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        try:
            return proc.returncode, err.read(), peak_kib(peak.name)
        finally:
            os.unlink(peak.name)


def refused(code: int, err: str, flag: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert flag in lines[0], lines[0]
    return lines[0]


def one_graph_model(nodes: list[onnx.NodeProto], functions: list[onnx.FunctionProto] = (),  # type: ignore[assignment]
           inits: list[onnx.TensorProto] = (),  # type: ignore[assignment]
           inputs: list[onnx.ValueInfoProto] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])] if inputs is None
        else inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        list(inits))
    return helper.make_model(graph, opset_imports=OPSET, functions=list(functions),
                             ir_version=9)


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save_model(model, path)
    return path
