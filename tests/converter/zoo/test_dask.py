"""The zoo on dask.distributed (converter.zoo.cluster): a LocalCluster for --jobs N, and a
real scheduler with two workers started as processes on 127.0.0.1 (`python -m dask
scheduler` / `worker`), one of them killed while it runs a model: the job finishes, that
model is started again on the other worker and says so, and the report equals the local
run's. Skipped with the reason when the cluster extra (dask.distributed) is not installed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the cluster extra (dask[distributed]) is not "
                                          "installed: pip install -e '.[cluster]'")

from converter.zoo import read_manifest, run_zoo  # noqa: E402
from converter.zoo.shards import comparable  # noqa: E402
from tests.converter.zoo.test_shards import RELU, zoo_manifest  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
HANG_GUARD = 300
"""Seconds: only a guard against a hang, never a pass/fail criterion."""

ONCE = RELU.replace("def make(path: Path, n: int = 4, op: str = \"Relu\") -> None:", '''
def make(path: Path, marker: str, n: int = 4, op: str = "Relu") -> None:
    """The first start writes its pid and its worker's, then waits to be killed with it."""
    import os
    import time

    first = Path(marker)
    if not first.exists():
        first.write_text(f"{os.getpid()} {os.getppid()}")
        while True:
            time.sleep(0.2)
    _make(path, n, op)


def _make(path: Path, n: int = 4, op: str = "Relu") -> None:''')

CRASH = '''
from pathlib import Path


def make(path: Path) -> None:
    import os

    os.abort()
'''


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WEBNN_CONVERTER_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_client_runs_the_zoo_with_the_in_process_report(tmp_path: Path) -> None:
    """`converter.zoo.run(entries, client=...)` on a LocalCluster of 2 worker processes
    (--jobs 2 without --scheduler is the same path: `local_client`)."""
    from converter.zoo import run
    from converter.zoo.cluster import local_client

    entries = read_manifest(zoo_manifest(tmp_path), generate=False)
    done: list[str] = []
    with local_client(2) as client:
        dask = run(entries, client=client, on_done=done.append)
        address = client.scheduler.address
    assert dask.engine == f"dask {address}" and address.startswith("tcp://127.0.0.1:")
    assert sorted(done) == sorted(e.name for e in entries)
    single = run_zoo(entries, jobs=1)
    assert comparable(dask) == comparable(single)
    assert dask.counts() == {"pass": 5, "fail": 0, "error": 1, "skipped": 1}


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "dask", *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _wait_for(path: Path, proc: subprocess.Popen[bytes] | None = None) -> str:
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        assert proc is None or proc.poll() is None, "the zoo ended before the marker"
        time.sleep(0.2)
    raise AssertionError(f"{path} not written within the hang guard")


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie nobody reaped yet does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.fixture
def cluster(tmp_path: Path, _cache: Path) -> Iterator[str]:
    """A scheduler and two single-threaded workers, each its own process (with its nanny),
    on 127.0.0.1; yields the scheduler's address."""
    env = {**os.environ, "WEBNN_CONVERTER_CACHE": str(_cache), "PYTHONPATH": str(ROOT),
           "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "3"}
    info = tmp_path / "scheduler.json"
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info)], env, tmp_path / "scheduler.log")]
    try:
        address = json.loads(_wait_for(info))["address"]
        for k in (1, 2):
            procs.append(_start(["worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                 "--nworkers", "1", "--no-dashboard", "--name", f"w{k}"],
                                env, tmp_path / f"worker{k}.log"))
        from distributed import Client

        with Client(address, timeout=HANG_GUARD) as client:
            client.wait_for_workers(2, timeout=HANG_GUARD)
        yield address
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@pytest.mark.slow
def test_scheduler_run_survives_a_killed_worker_and_matches_the_local_run(
        tmp_path: Path, cluster: str) -> None:
    manifest = zoo_manifest(tmp_path)
    marker = tmp_path / "started"
    (tmp_path / "make_once.py").write_text(ONCE)
    (tmp_path / "make_crash.py").write_text(CRASH)
    with open(manifest, "a") as f:
        f.write(f'\n[[model]]\nname = "killed"\nsource = "generated:make_once.py"\n'
                f'args = {{ marker = "{marker}" }}\n'
                '\n[[model]]\nname = "crash"\nsource = "generated:make_crash.py"\n')
    # the manifest named relative to the client's folder, which is not the workers'
    cli = [sys.executable, "-c", "import sys; from cli.entry import main; sys.argv[0] = "
           "'webnn-convert'; sys.exit(main())", "zoo", manifest.name, "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    remote = tmp_path / "remote"
    with open(tmp_path / "zoo.log", "wb") as log:
        zoo = subprocess.Popen([*cli, "--scheduler", cluster, "--report", str(remote)],
                               cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        child, worker = (int(x) for x in _wait_for(marker, zoo).split())
        os.kill(worker, signal.SIGKILL)  # the worker process running "killed", mid-run
        assert zoo.wait(timeout=HANG_GUARD) == 1  # "bad" and "crash" are errors
    finally:
        if zoo.poll() is None:
            zoo.kill()
            zoo.wait()
    output = (tmp_path / "zoo.log").read_text()
    report = json.loads((remote / "report.json").read_text())
    rows = {m["name"]: m for m in report["models"]}
    assert report["engine"] == f"dask {cluster}"
    assert rows["killed"]["status"] == "pass" and rows["killed"]["attempts"] >= 2, rows["killed"]
    assert "started 2 times (a worker running it was lost)" in output, output
    assert "started 2 times" in (remote / "report.md").read_text()
    assert rows["crash"]["reason_code"] == "crashed" and "SIGABRT" in rows["crash"]["message"]
    deadline = time.monotonic() + HANG_GUARD
    while _alive(child) and time.monotonic() < deadline:  # the killed worker's model child
        time.sleep(0.2)                                  # ends too (it watches its parent)
    assert not _alive(child)

    local = tmp_path / "local"
    r = subprocess.run([*cli, "--jobs", "2", "--report", str(local)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=HANG_GUARD)
    assert r.returncode == 1, r.stdout + r.stderr
    single = json.loads((local / "report.json").read_text())
    assert single["engine"] == "dask LocalCluster"
    assert comparable(report) == comparable(single)
    assert report["summary"] == {"total": 9, "pass": 6, "fail": 0, "error": 2, "skipped": 1}


HANG = '''
from pathlib import Path


def make(path: Path, marker: str) -> None:
    import os
    import time

    Path(marker).write_text(str(os.getpid()))
    while True:
        time.sleep(0.2)
'''


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_local_cluster_run_exits_with_one_line_and_stops_its_models(
        tmp_path: Path, sig: signal.Signals) -> None:
    marker = tmp_path / "started"
    (tmp_path / "make_hang.py").write_text(HANG)
    manifest = zoo_manifest(tmp_path, f'\n[[model]]\nname = "hang"\n'
                                      f'source = "generated:make_hang.py"\n'
                                      f'args = {{ marker = "{marker}" }}\n')
    zoo = subprocess.Popen([sys.executable, "-c", "import sys; from cli.entry import main; "
                            "sys.argv[0] = 'webnn-convert'; sys.exit(main())", "zoo",
                            str(manifest), "--jobs", "2", "--no-progress"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        child = int(_wait_for(marker, zoo))
        zoo.send_signal(sig)
        _, err = zoo.communicate(timeout=HANG_GUARD)
    finally:
        if zoo.poll() is None:
            zoo.kill()
            zoo.wait()
    assert zoo.returncode == 128 + sig, err
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert err.decode() == f"error: {word}\n", err
    deadline = time.monotonic() + HANG_GUARD
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(child)


@pytest.mark.slow
def test_unreachable_scheduler_is_one_error_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = subprocess.run([sys.executable, "-c", "import sys; from cli.entry import main; "
                        "sys.argv[0] = 'webnn-convert'; sys.exit(main())", "zoo",
                        str(zoo_manifest(tmp_path)), "--scheduler", f"tcp://127.0.0.1:{port}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith(f"error: cannot reach the Dask scheduler at tcp://127.0.0.1:"
                               f"{port}: ") and r.stderr.count("\n") == 1, r.stderr
