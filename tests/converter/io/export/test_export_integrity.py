"""export() output folders never mix, never leak, work across file systems.

- Concurrent exports into one folder (two processes, 200 rounds each pairing): the folder
  always holds exactly one export, byte for byte (oracle: the same graph exported alone).
- A folder on another file system than its parent (a mount point, simulated by renames that
  fail with EXDEV across it; a real tmpfs mount where the test may mount one).
- Temporary folders of killed exports are swept by the next export; a live one is not.
- The marker records size + SHA-256: a listed file that changed makes the folder not ours.
- Disk full / read-only folders: one-line errors naming the user's folder, never the
  temporary one; the old output stays.
"""

from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.io.export import exporter as api
from converter.io.export import folder
from converter.io.export.exporter import MARKER, ExportFolderError, FolderNotOurs, export
from converter.io.export.folder import TEMP_PREFIX, TempFolder

ROUNDS = 200


def small_graph(seed: int, extra: bool = False) -> MLGraph:
    """y = relu(x * w + b) (then tanh when `extra`), with seeded weights."""
    rng = np.random.default_rng(seed)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [4, 8], "float32")
    y = b.relu(b.add(b.mul(x, b.constant(rng.standard_normal((4, 8)).astype(np.float32))),
                     b.constant(rng.standard_normal((8,)).astype(np.float32))))
    return b.build({"y": b.tanh(y) if extra else y})


def contents(path: Path) -> dict[str, bytes]:
    """Every entry of `path` but the marker, by name (folders as b'<dir>')."""
    return {p.name: (p.read_bytes() if p.is_file() else b"<dir>")
            for p in path.iterdir() if p.name != MARKER}


def check_marker(path: Path) -> None:
    """The marker lists exactly the other files, each with its size and SHA-256."""
    data = json.loads((path / MARKER).read_text())
    assert "state" not in data
    files = contents(path)
    assert data["files"] == sorted(files)
    for name, blob in files.items():
        assert data["checksums"][name] == {"size": len(blob),
                                           "sha256": hashlib.sha256(blob).hexdigest()}


def leftovers(path: Path) -> list[str]:
    return sorted(str(p) for p in path.rglob("*") if ".export-" in p.name)


# -- concurrent exports ------------------------------------------------------------------------


def _worker(base: str, seed: int, fmt: str, rounds: int, spread: float, barrier: Any,
            errors: Any) -> None:
    graph = small_graph(seed, extra=seed % 2 == 1)
    delays = np.random.default_rng(seed).uniform(0, spread, rounds)
    for i in range(rounds):
        barrier.wait()
        time.sleep(delays[i])  # start offsets spread over one export's duration
        try:
            export(graph, Path(base) / f"r{i}", format=fmt, stem="m")
        except Exception as e:  # noqa: BLE001 - reported to the test
            errors.put(f"round {i} ({fmt}): {type(e).__name__}: {e}")


@pytest.mark.parametrize("fmt_a,fmt_b", [("all", "webnn"), ("all", "all")])
def test_concurrent_exports_into_one_folder_never_mix(tmp_path: Path, fmt_a: str,
                                                      fmt_b: str) -> None:
    refs = {}
    started = time.monotonic()
    for seed, fmt in ((1, fmt_a), (2, fmt_b)):
        ref = tmp_path / f"ref{seed}"
        export(small_graph(seed, extra=seed % 2 == 1), ref, format=fmt, stem="m")
        refs[seed] = contents(ref)
    spread = (time.monotonic() - started) / 2  # not a bound: it only spreads the starts
    assert refs[1] != refs[2] and set(refs[1]) & set(refs[2])
    base = tmp_path / "rounds"
    base.mkdir()
    export(small_graph(3), tmp_path / "earlier", format="js", stem="m")
    for i in range(0, ROUNDS, 2):  # half the rounds replace an earlier export
        shutil.copytree(tmp_path / "earlier", base / f"r{i}")
    ctx = multiprocessing.get_context("spawn")
    barrier, errors = ctx.Barrier(2, timeout=300), ctx.Queue()  # hang guard
    procs = [ctx.Process(target=_worker, args=(str(base), seed, fmt, ROUNDS, spread, barrier,
                                             errors))
             for seed, fmt in ((1, fmt_a), (2, fmt_b))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)  # a hang guard only
        assert p.exitcode == 0
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert problems == []
    mixed = [(i, sorted(found)) for i in range(ROUNDS)
             if (found := contents(base / f"r{i}")) not in (refs[1], refs[2])]
    assert mixed == [], f"{len(mixed)}/{ROUNDS} folders mix two exports: {mixed[:3]}"
    for i in range(ROUNDS):
        check_marker(base / f"r{i}")
    assert leftovers(base) == []


PAUSING_EXPORT = """
import os, sys, time
from pathlib import Path
from tests.converter.io.export.test_export_integrity import small_graph
from converter.io.export.exporter import export
out, seed, fmt, paused, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
if paused:  # pause after the marker and one file are moved in, until `go` exists
    real, calls = os.replace, []
    def replace(src, dst, **kwargs):
        real(src, dst, **kwargs)
        calls.append(dst)
        if len(calls) == 2:
            Path(paused).write_text("paused")
            while not os.path.exists(go):
                time.sleep(0.02)
    os.replace = replace
export(small_graph(seed, extra=seed % 2 == 1), out, format=fmt, stem="m")
"""


def _blocked_on_a_lock(pid: int) -> bool:
    """Whether process `pid` waits for a file lock (a `->` line of /proc/locks)."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and str(pid) in fields:
            return True
    return False


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux /proc/locks")
def test_an_export_waits_while_another_moves_its_files_in(tmp_path: Path) -> None:
    """Deterministic interleaving: A stops between two renames of its move-in; B, started
    then, must not change the folder until A is done (old code: B ran through and A then
    finished its renames on top of B's files)."""
    refs = {}
    for seed, fmt in ((1, "all"), (2, "webnn")):
        export(small_graph(seed, extra=seed % 2 == 1), tmp_path / f"ref{seed}", format=fmt,
               stem="m")
        refs[seed] = contents(tmp_path / f"ref{seed}")
    out = tmp_path / "out"
    export(small_graph(3), out, format="js", stem="m")
    paused, go = tmp_path / "paused", tmp_path / "go"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[4]),
                                         env.get("PYTHONPATH", "")])

    def start(seed: int, fmt: str, pause: bool) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", PAUSING_EXPORT, str(out), str(seed),
                                 fmt, str(paused) if pause else "", str(go)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    a = start(1, "all", True)
    deadline = time.monotonic() + 300  # hang guards only
    while not paused.exists() and a.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert paused.exists(), a.communicate()[1]
    b = start(2, "webnn", False)
    while b.poll() is None and not _blocked_on_a_lock(b.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    go.write_text("go")
    for p in (a, b):
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    assert contents(out) == refs[2]  # B moved in after A, whole
    check_marker(out)
    assert leftovers(tmp_path) == []


# -- file systems ------------------------------------------------------------------------------


@pytest.fixture()
def exdev_across(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Make `boundary` behave as a mount point: renames between inside and outside it fail
    with EXDEV (as they do across file systems)."""

    def install(boundary: Path) -> None:
        real_replace, real_rename = os.replace, os.rename

        def inside(p: Any) -> bool:
            q = Path(os.path.abspath(os.fsdecode(p)))
            return q == boundary or boundary in q.parents

        def check(src: Any, dst: Any) -> None:
            if inside(src) != inside(dst):
                raise OSError(errno.EXDEV, "Invalid cross-device link", os.fsdecode(src),
                              None, os.fsdecode(dst))

        def replace(src: Any, dst: Any, **kw: Any) -> None:
            check(src, dst)
            real_replace(src, dst, **kw)

        def rename(src: Any, dst: Any, **kw: Any) -> None:
            check(src, dst)
            real_rename(src, dst, **kw)

        monkeypatch.setattr(os, "replace", replace)
        monkeypatch.setattr(os, "rename", rename)

    return install


def test_a_folder_on_another_file_system_than_its_parent(
        tmp_path: Path, exdev_across: Callable[[Path], None]) -> None:
    out = tmp_path / "volume"
    out.mkdir()  # an empty mount point, like a container's `-o /out`
    exdev_across(out.resolve())
    export(small_graph(1), out, format="all", stem="m")
    check_marker(out)
    export(small_graph(2), out, format="webnn", stem="n")  # re-export: replaced in place
    check_marker(out)
    assert sorted(contents(out)) == ["n.manifest.json", "n.webnn", "n.weights"]
    assert leftovers(tmp_path) == []


@pytest.fixture()
def mount_tmpfs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a tmpfs (`size`, `ro`) below tmp_path; skipped where mounting is not allowed."""
    mounted: list[Path] = []

    def mount(name: str, size: str = "4m", ro: bool = False) -> Path:
        point = tmp_path / name
        point.mkdir()
        opts = f"size={size}" + (",ro" if ro else "")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(point)],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        mounted.append(point)
        return point

    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting needs root and mount(8)")
    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", "-l", str(point)], capture_output=True, timeout=60)


def test_a_real_mount_point_as_the_output_folder(tmp_path: Path,
                                                 mount_tmpfs: Callable[..., Path]) -> None:
    out = mount_tmpfs("vol")
    assert out.stat().st_dev != tmp_path.stat().st_dev
    export(small_graph(1), out, format="all", stem="m")
    check_marker(out)
    export(small_graph(2), out, format="webnn", stem="m")
    check_marker(out)
    assert sorted(contents(out)) == ["m.manifest.json", "m.webnn", "m.weights"]
    assert leftovers(out) == []


def test_a_full_disk_names_the_folder_and_keeps_the_old_output(
        tmp_path: Path, mount_tmpfs: Callable[..., Path]) -> None:
    out = mount_tmpfs("small", size="256k")
    export(small_graph(1), out, format="webnn", stem="m")
    before = contents(out)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [512, 256], "float32")
    w = np.random.default_rng(3).standard_normal((512, 256)).astype(np.float32)  # 512 KiB
    big = b.build({"y": b.add(x, b.constant(w))})
    with pytest.raises(ExportFolderError) as info:
        export(big, out, format="webnn", stem="m")
    message = str(info.value)
    assert info.value.errno == errno.ENOSPC
    assert str(out) in message and "No space left on device" in message
    assert ".export-" not in message and "\n" not in message
    assert contents(out) == before
    check_marker(out)
    assert leftovers(out) == []


def test_a_read_only_mount_names_the_folder(tmp_path: Path,
                                            mount_tmpfs: Callable[..., Path]) -> None:
    out = mount_tmpfs("ro", ro=True)
    with pytest.raises(ExportFolderError) as info:
        export(small_graph(1), out, format="webnn", stem="m")
    assert info.value.errno == errno.EROFS
    assert str(out) in str(info.value) and ".export-" not in str(info.value)
    with pytest.raises(ExportFolderError, match="cannot create the folder"):
        export(small_graph(1), out / "sub", format="webnn", stem="m")


def test_full_disk_and_read_only_errors_simulated(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    export(small_graph(1), out, format="webnn", stem="m")
    before = contents(out)
    real = api._write_all

    def full(graph: MLGraph, where: Path, *args: Any) -> list[Path]:
        real(graph, where, *args)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(api, "_write_all", full)
    with pytest.raises(ExportFolderError, match="No space left on device") as info:
        export(small_graph(2), out, format="all", stem="m")
    assert str(out) in str(info.value) and ".export-" not in str(info.value)
    assert contents(out) == before and leftovers(tmp_path) == []
    with pytest.raises(ExportFolderError):
        export(small_graph(2), tmp_path / "new", format="all", stem="m")
    assert not (tmp_path / "new").exists()
    monkeypatch.setattr(api, "_write_all", real)

    def read_only(*args: Any, **kwargs: Any) -> str:
        raise OSError(errno.EROFS, "Read-only file system", str(out / f"{TEMP_PREFIX}x"))

    monkeypatch.setattr(folder.tempfile, "mkdtemp", read_only)
    with pytest.raises(ExportFolderError, match="Read-only file system") as info:
        export(small_graph(2), out, format="webnn", stem="m")
    assert f"cannot write into {out}:" in str(info.value)
    assert ".export-" not in str(info.value)
    assert contents(out) == before


def test_a_dangling_symlink_as_the_output_folder(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "missing")
    with pytest.raises(ExportFolderError, match="symbolic link to .*missing, which does not "
                                                "exist") as info:
        export(small_graph(1), link, format="webnn", stem="m")
    assert str(link) in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link"]


# -- temporary folders ---------------------------------------------------------------------------


def test_stale_temporary_folders_are_swept_live_ones_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export(small_graph(1), out, format="webnn", stem="m")
    live = TempFolder(out, out)  # holds its owner lock, as a running export does
    (live.path / "m.weights").write_bytes(b"in progress")
    dead = TempFolder(out, out)
    (dead.path / "m.weights").write_bytes(b"x" * 1000)
    dead_path = dead.path
    os.close(dead._fd)  # what the kernel does when its process is killed
    empty = out / f"{TEMP_PREFIX}empty"
    empty.mkdir()  # a process killed while making one
    export(small_graph(2), out, format="webnn", stem="m")
    assert not dead_path.exists() and not empty.exists()
    assert (live.path / "m.weights").read_bytes() == b"in progress"
    live.close()
    assert leftovers(tmp_path) == []
    check_marker(out)
    # A folder that only looks like ours (no owner file, not empty) stays, and counts as
    # someone else's.
    fake = out / f"{TEMP_PREFIX}mine"
    fake.mkdir()
    (fake / "data").write_text("keep")
    with pytest.raises(FolderNotOurs, match=f"{TEMP_PREFIX}mine"):
        export(small_graph(2), out, format="webnn", stem="m")
    assert (fake / "data").read_text() == "keep"


# -- the marker ----------------------------------------------------------------------------------


def test_a_listed_file_that_changed_is_not_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export(small_graph(1), out, format="all", stem="m")
    (out / "m.html").write_text("<p>my edits</p>")
    with pytest.raises(FolderNotOurs, match="'m.html', which changed since"):
        export(small_graph(1), out, format="webnn", stem="m")
    assert (out / "m.html").read_text() == "<p>my edits</p>"
    # A marker that lists a user's file (edited, or copied from elsewhere) without a record.
    out2 = tmp_path / "out2"
    export(small_graph(1), out2, format="webnn", stem="m")
    (out2 / "notes.txt").write_text("keep me")
    data = json.loads((out2 / MARKER).read_text())
    data["files"].append("notes.txt")
    (out2 / MARKER).write_text(json.dumps(data))
    with pytest.raises(FolderNotOurs, match="'notes.txt', which .* lists without a checksum"):
        export(small_graph(2), out2, format="onnx", stem="n")
    assert (out2 / "notes.txt").read_text() == "keep me"
    # A record whose checksum is wrong counts as changed.
    data["checksums"]["notes.txt"] = {"size": 7, "sha256": "0" * 64}
    (out2 / MARKER).write_text(json.dumps(data))
    with pytest.raises(FolderNotOurs, match="'notes.txt', which changed"):
        export(small_graph(2), out2, format="onnx", stem="n")
    assert (out2 / "notes.txt").read_text() == "keep me"
    # force writes anyway and removes nothing.
    export(small_graph(2), out2, format="onnx", stem="n", force=True)
    assert (out2 / "notes.txt").read_text() == "keep me"
    assert (out2 / "n.onnx").is_file() and (out2 / "m.webnn").is_file()
