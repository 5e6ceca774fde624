"""Each zoo model in a child of its worker (converter.zoo.isolation): a crash, a model past
its time budget or past its memory budget fails that model with its reason and the others
go on; the plain install (no Dask) runs the zoo's --jobs N on its process pool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from converter.zoo import Budget, read_manifest, run_zoo
from tests.converter.zoo.test_shards import RELU, zoo_manifest

HOSTILE = RELU + '''

def crash(path: Path) -> None:
    import os

    os.abort()


def hang(path: Path) -> None:
    import time

    while True:
        time.sleep(1)


def hog(path: Path, gib: int = 4) -> None:
    block = bytearray(gib << 30)
    path.write_bytes(bytes(block[:1]))
'''


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBNN_CONVERTER_CACHE", str(tmp_path / "cache"))


def _hostile(folder: Path) -> Path:
    for kind in ("crash", "hang", "hog"):
        (folder / f"make_{kind}.py").write_text(HOSTILE.replace(f"def {kind}(", "def make("))
    (folder / "make_relu.py").write_text(RELU)
    path = folder / "zoo.toml"
    path.write_text("".join(f'[[model]]\nname = "{n}"\nsource = "generated:make_{n}.py"\n\n'
                            for n in ("relu", "crash", "hang", "hog")))
    return path


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not hasattr(os, "fork") or not Path("/proc/self/statm").exists(),
                    reason="isolation needs os.fork; the memory budget is read from /proc")
def test_crash_timeout_and_memory_fail_only_their_model(tmp_path: Path) -> None:
    entries = read_manifest(_hostile(tmp_path), generate=False)
    budget = Budget(seconds=5, memory=_address_space() + (1 << 30))
    report = run_zoo(entries, jobs=1, budget=budget)
    rows = {r.name: r for r in report.results}
    assert rows["relu"].status == "pass"
    assert (rows["crash"].status, rows["crash"].reason_code) == ("error", "crashed")
    assert "SIGABRT" in rows["crash"].message
    assert (rows["hang"].status, rows["hang"].reason_code) == ("error", "timeout")
    assert "time budget of 5 s" in rows["hang"].message
    assert rows["hog"].status == "error" and "MemoryError" in rows["hog"].message
    assert report.engine == "in-process"


def test_cli_model_timeout(tmp_path: Path) -> None:
    manifest = _hostile(tmp_path)
    r = CliRunner().invoke(cli, ["zoo", str(manifest), "--filter", "hang", "--filter", "relu",
                                 "--model-timeout", "3", "--json"])
    assert r.exit_code == 1, r.output
    rows = {m["name"]: m for m in json.loads(r.stdout)["models"]}
    assert rows["relu"]["status"] == "pass" and rows["hang"]["reason_code"] == "timeout"
    r = CliRunner().invoke(cli, ["zoo", str(manifest), "--model-memory", "lots"])
    assert r.exit_code == 2 and "--model-memory" in r.stderr


def test_plain_install_runs_jobs_on_the_process_pool(tmp_path: Path) -> None:
    """Without dask.distributed importable, --jobs 2 runs on the process pool, with the
    same report as the in-process run."""
    manifest = zoo_manifest(tmp_path)
    code = (
        "import sys, json\n"
        "sys.modules['distributed'] = None  # as if the cluster extra were not installed\n"
        "from converter.zoo import read_manifest, run_zoo\n"
        "from converter.zoo.shards import comparable\n"
        f"entries = read_manifest({str(manifest)!r}, generate=False)\n"
        "pool = run_zoo(entries, jobs=2)\n"
        "one = run_zoo(entries, jobs=1)\n"
        "print(json.dumps([pool.engine, one.engine, comparable(pool) == comparable(one),\n"
        "                  pool.counts()]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=Path(__file__).resolve().parents[3], check=True)
    engine, single, same, counts = json.loads(out.stdout.strip().splitlines()[-1])
    assert (engine, single, same) == ("process pool", "in-process", True)
    assert counts == {"pass": 5, "fail": 0, "error": 1, "skipped": 1}


def test_models_named_by_url_are_read_by_the_worker(tmp_path: Path) -> None:
    """`url` + `fetch = true`: the process running the entry downloads the model (here from
    a server on 127.0.0.1), checked against `sha256`; `url` alone stays provenance."""
    import hashlib
    import http.server
    import threading
    from functools import partial

    served = tmp_path / "served"
    served.mkdir()
    (tmp_path / "make_relu.py").write_text(RELU)
    from converter.zoo.generated import generate

    model = generate(tmp_path / "make_relu.py", {"n": 3}, folder=served)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/{model.name}"
        manifest = tmp_path / "zoo.toml"
        manifest.write_text(
            f'[[model]]\nname = "web"\nurl = "{url}"\nfetch = true\nsha256 = "{digest}"\n\n'
            f'[[model]]\nname = "changed"\nurl = "{url}?v=2"\nfetch = true\n'
            f'sha256 = "{"0" * 64}"\n\n'
            f'[[model]]\nname = "gone"\nurl = "{url}.missing"\nfetch = true\n\n'
            f'[[model]]\nname = "provenance"\nurl = "{url}"\n')
        entries = read_manifest(manifest, generate=False)
        assert [e.path for e in entries] == [None] * 4
        rows = {r.name: r for r in run_zoo(entries, jobs=1).results}
    finally:
        server.shutdown()
        server.server_close()
    assert rows["web"].status == "pass" and Path(rows["web"].path or "").is_file()
    assert rows["changed"].reason_code == "model_changed"
    assert rows["gone"].reason_code == "fetch_failed" and "404" in rows["gone"].message
    assert rows["provenance"].status == "skipped" and "not downloaded" in \
        rows["provenance"].message


def test_pending_entries_carry_their_manifest_folder(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest read by a relative path materializes from another current folder (a
    worker's): the entry carries the manifest's folder, absolute."""
    from converter.zoo import materialize

    zoo_manifest(tmp_path)
    monkeypatch.chdir(tmp_path)
    entries = read_manifest("zoo.toml", generate=False)
    monkeypatch.chdir(tmp_path.parent)
    done = materialize(entries[0])
    assert done.path is not None and Path(done.path).is_file(), done.missing
