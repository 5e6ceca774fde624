"""Splitting a zoo run into shards (CI matrices) and merging their reports.

`webnn-convert zoo --shard K/N` runs the K-th of N disjoint parts of the entries (after
`--filter`); every entry is in exactly one shard, slow and unavailable ones included (their
rows are cheap), so the shards' reports merged (`webnn-convert zoo merge REPORT...`,
`merge`) give the report one run of all the entries gives: the same rows in manifest order
(`comparable` drops what legitimately differs between runs: timings, dates, job counts and
engine, retry counts).

Balance: without past durations, entry i goes to shard i mod N (manifest order); with a
previous report (`durations`: each model's total seconds), entries are placed longest
first on the least loaded shard (ties: the lower shard, then manifest order), models the
report lacks counting as the median known duration. The split is deterministic: every
shard of a matrix computes the same assignment from the same entries and report.

Restrictions: the shards must be run on the same manifests, filters and options (merge
checks the names and their order, the backend, device and profiles, and that each of the
N shards is there once).
"""

from __future__ import annotations

import heapq
import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from converter.core.errors import InvalidModel
from converter.zoo.manifest import ZooEntry
from converter.zoo.records import ZooReport


def parse_shard(text: str) -> tuple[int, int]:
    """(K, N) of "K/N" with 1 <= K <= N; ValueError naming the rule otherwise."""
    parts = text.split("/")
    try:
        k, n = (int(p) for p in parts) if len(parts) == 2 else (0, 0)
    except ValueError:
        k, n = 0, 0
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"--shard takes K/N with 1 <= K <= N (e.g. 2/3), got {text!r}")
    return k, n


def durations(report: str | Path) -> dict[str, float]:
    """{model name: total seconds} of a report.json; InvalidModel when unreadable."""
    try:
        data = json.loads(Path(report).read_text(encoding="utf-8"))
        return {str(m["name"]): float(m.get("timings", {}).get("total", 0.0))
                for m in data["models"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidModel(f"report {str(report)!r} is not a zoo report.json: "
                           f"{type(exc).__name__}: {exc}") from None


def assign(names: Sequence[str], n: int, past: Mapping[str, float] | None = None) -> list[int]:
    """The shard (0-based) of each name (see the module docstring)."""
    if not past:
        return [i % n for i in range(len(names))]
    known = [past[x] for x in names if x in past]
    default = statistics.median(known) if known else 1.0
    cost = [float(past.get(x, default)) for x in names]
    heap = [(0.0, s) for s in range(n)]
    out = [0] * len(names)
    for i in sorted(range(len(names)), key=lambda i: (-cost[i], i)):
        load, s = heapq.heappop(heap)
        out[i] = s
        heapq.heappush(heap, (load + cost[i], s))
    return out


def select(entries: Sequence[ZooEntry], k: int, n: int,
           past: Mapping[str, float] | None = None) -> list[ZooEntry]:
    """The entries of shard `k` of `n` (1-based), in manifest order."""
    shards = assign([e.name for e in entries], n, past)
    return [e for e, s in zip(entries, shards, strict=True) if s == k - 1]


def read_report(path: str | Path) -> ZooReport:
    """A report.json as a ZooReport; InvalidModel when unreadable."""
    try:
        return ZooReport.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidModel(f"report {str(path)!r} is not a zoo report.json: "
                           f"{type(exc).__name__}: {exc}") from None


def merge(reports: Sequence[ZooReport], names: Sequence[str] = ()) -> ZooReport:
    """One report of the shards' `reports` (their file `names` for the errors): rows in the
    run's order; started the earliest, seconds the longest shard's, jobs summed.
    InvalidModel when they are not the N shards of one run."""
    import dataclasses

    labels = list(names) or [f"report {i + 1}" for i in range(len(reports))]
    if not reports:
        raise InvalidModel("zoo merge: give the shards' report.json files")
    first = reports[0]
    if not first.shard:
        raise InvalidModel(f"zoo merge: {labels[0]} is not a shard's report (run with --shard)")
    total = first.shard.split("/")[1]
    seen: dict[str, str] = {}
    for label, r in zip(labels, reports, strict=True):
        if not r.shard:
            raise InvalidModel(f"zoo merge: {label} is not a shard's report (run with --shard)")
        k, n = r.shard.split("/")
        if n != total or r.order != first.order:
            raise InvalidModel(f"zoo merge: {label} is shard {r.shard} of another run than "
                               f"{labels[0]} (other models or shard count)")
        for key in ("backend", "device", "profiles"):
            if getattr(r, key) != getattr(first, key):
                raise InvalidModel(f"zoo merge: {label} has {key} {getattr(r, key)!r}, "
                                   f"{labels[0]} {getattr(first, key)!r}")
        if k in seen:
            raise InvalidModel(f"zoo merge: shard {r.shard} given twice ({seen[k]}, {label})")
        seen[k] = label
    missing = [f"{k}/{total}" for k in range(1, int(total) + 1) if str(k) not in seen]
    if missing:
        raise InvalidModel(f"zoo merge: shard(s) {', '.join(missing)} missing")
    rows = {res.name: res for r in reports for res in r.results}
    absent = [x for x in first.order if x not in rows]
    if absent or len(rows) != len(first.order):
        raise InvalidModel(f"zoo merge: the shards do not hold every model of the run once "
                           f"(missing: {', '.join(absent[:5]) or 'none'})")
    return dataclasses.replace(
        first, results=tuple(rows[x] for x in first.order),
        jobs=sum(r.jobs for r in reports), started=min(r.started for r in reports),
        seconds=max(r.seconds for r in reports), engine="merged", shard="", order=())


VOLATILE_REPORT = ("started", "seconds", "jobs", "engine", "shard", "order")
VOLATILE_ROW = ("timings", "attempts")


def comparable(report: ZooReport | Mapping[str, Any]) -> dict[str, Any]:
    """A report's JSON form without what differs between two runs of the same models
    (`VOLATILE_REPORT`, `VOLATILE_ROW`): equal for equal outcomes, whatever the engine,
    sharding or timing."""
    d = dict(report.to_dict() if isinstance(report, ZooReport) else report)
    for key in VOLATILE_REPORT:
        d.pop(key, None)
    d["models"] = [{k: v for k, v in m.items() if k not in VOLATILE_ROW}
                   for m in d.get("models", [])]
    return d
