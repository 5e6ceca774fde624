"""The zoo's records: one model's outcome (`ZooResult`), a run's report (`ZooReport`, its
stable JSON form and text summary) and a model's resource `Budget`. Plain data, picklable
(they travel between the zoo's worker processes and Dask tasks)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

STATUSES = ("pass", "fail", "error", "skipped")


@dataclass(frozen=True)
class Budget:
    """What one model may use when it runs isolated (`converter.zoo.isolation`): wall-clock
    `seconds` and address-space `memory` bytes (None or 0: unlimited)."""

    seconds: float | None = None
    memory: int | None = None

    @property
    def limited(self) -> bool:
        return bool(self.seconds) or bool(self.memory)


@dataclass(frozen=True)
class ZooResult:
    """The outcome of one model (plain data, picklable)."""

    name: str
    status: str
    format: str = ""
    path: str | None = None
    source: str = ""
    licence: str = ""
    message: str = ""
    reason_code: str = ""
    rtol: float = 0.0
    atol: float = 0.0
    max_abs: float | None = None
    max_rel: float | None = None
    outputs: tuple[dict[str, Any], ...] = ()
    divergence: dict[str, Any] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    conversion: dict[str, int] = field(default_factory=dict)
    operations: int = 0
    notes: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    """With a target: what the converted graph uses outside its limits
    (`converter.passes.targets.check.summary`); any makes the row fail."""
    profiles: dict[str, str] = field(default_factory=dict)
    """Per built-in profile run (`run_entry(profiles=...)`): its verdict (`profile_verdict`)."""
    attempts: int = 1
    """How many times an engine started the model (Dask: a worker lost while running it
    makes the scheduler start it again elsewhere); more than 1 is said in the reports."""

    @property
    def total_seconds(self) -> float:
        return float(self.timings.get("total", 0.0))

    def to_dict(self) -> dict[str, Any]:
        from converter.validate.compare import json_number

        return {"name": self.name, "status": self.status, "format": self.format,
                "path": self.path, "source": self.source, "licence": self.licence,
                "message": self.message, "reason_code": self.reason_code,
                "rtol": self.rtol, "atol": self.atol,
                "max_abs": json_number(self.max_abs) if self.max_abs is not None else None,
                "max_rel": json_number(self.max_rel) if self.max_rel is not None else None,
                "outputs": list(self.outputs), "divergence": self.divergence,
                "timings": {k: round(v, 6) for k, v in self.timings.items()},
                "conversion": dict(self.conversion), "operations": self.operations,
                "notes": list(self.notes),
                **({"unsupported": list(self.unsupported)} if self.unsupported else {}),
                **({"profiles": dict(self.profiles)} if self.profiles else {}),
                **({"attempts": self.attempts} if self.attempts != 1 else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ZooResult:
        """The result `to_dict` gave (a report.json row)."""
        def number(v: Any) -> float | None:
            return None if v is None else float(v)

        return cls(name=str(d["name"]), status=str(d["status"]), format=str(d.get("format", "")),
                   path=d.get("path"), source=str(d.get("source", "")),
                   licence=str(d.get("licence", "")), message=str(d.get("message", "")),
                   reason_code=str(d.get("reason_code", "")), rtol=float(d.get("rtol", 0.0)),
                   atol=float(d.get("atol", 0.0)), max_abs=number(d.get("max_abs")),
                   max_rel=number(d.get("max_rel")),
                   outputs=tuple(dict(o) for o in d.get("outputs", ())),
                   divergence=d.get("divergence"),
                   timings={k: float(v) for k, v in dict(d.get("timings", {})).items()},
                   conversion={k: int(v) for k, v in dict(d.get("conversion", {})).items()},
                   operations=int(d.get("operations", 0)), notes=tuple(d.get("notes", ())),
                   unsupported=tuple(d.get("unsupported", ())),
                   profiles=dict(d.get("profiles", {})), attempts=int(d.get("attempts", 1)))

    def retry_text(self) -> str:
        """'started N times (a worker running it was lost)' when retried, else ''."""
        if self.attempts <= 1:
            return ""
        return f"started {self.attempts} times (a worker running it was lost)"


def profile_verdict(r: ZooResult) -> str:
    """One profile column's cell: pass, fail, error, skipped, or `unsupported (op role
    dtype, ...)` when the graph uses what the profile lacks."""
    if r.unsupported:
        return f"unsupported ({', '.join(r.unsupported)})"
    return r.status


@dataclass(frozen=True)
class ZooReport:
    """Results of a zoo run, in manifest order."""

    results: tuple[ZooResult, ...]
    backend: str
    device: str
    jobs: int
    started: str
    seconds: float
    profiles: tuple[str, ...] = ()
    """The profiles each row was also run under (a report column each)."""
    engine: str = ""
    """What ran the models: "in-process", "process pool", "dask LocalCluster" or
    "dask <scheduler address>"; merged shards: "merged"."""
    shard: str = ""
    """"K/N" for one shard of a run (`converter.zoo.shards`), else ""."""
    order: tuple[str, ...] = ()
    """A shard's report: the names of every model of the whole run, in manifest order
    (what `merge` orders the merged rows by); () otherwise."""

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.results) for s in STATUSES}

    @property
    def passed(self) -> bool:
        return all(r.status in ("pass", "skipped")
                   and all(v in ("pass", "skipped") for v in r.profiles.values())
                   for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "device": self.device, "jobs": self.jobs,
                "started": self.started, "seconds": round(self.seconds, 3),
                "summary": {"total": len(self.results), **self.counts()},
                **({"profiles": list(self.profiles)} if self.profiles else {}),
                **({"engine": self.engine} if self.engine else {}),
                **({"shard": self.shard, "order": list(self.order)} if self.shard else {}),
                "models": [r.to_dict() for r in self.results]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ZooReport:
        """The report `to_dict` gave (a report.json)."""
        return cls(results=tuple(ZooResult.from_dict(m) for m in d.get("models", ())),
                   backend=str(d.get("backend", "")), device=str(d.get("device", "")),
                   jobs=int(d.get("jobs", 1)), started=str(d.get("started", "")),
                   seconds=float(d.get("seconds", 0.0)),
                   profiles=tuple(d.get("profiles", ())), engine=str(d.get("engine", "")),
                   shard=str(d.get("shard", "")), order=tuple(d.get("order", ())))

    def to_text(self) -> str:
        width = max((len(r.name) for r in self.results), default=4)
        lines = []
        for r in self.results:
            err = f"max abs {r.max_abs:.3g}" if r.max_abs is not None else ""
            detail = r.message.splitlines()[0] if r.message else ""
            if r.divergence:
                detail = (f"first diverging node {r.divergence.get('op_type')} "
                          f"{r.divergence.get('node')!r}")
            if r.attempts > 1:
                detail = "; ".join(filter(None, [detail, r.retry_text()]))
            lines.append(f"{r.name:<{width}}  {r.status.upper():<7} {err:<17} "
                         f"{r.total_seconds:7.2f}s  {detail}".rstrip())
            lines += [f"{'':<{width}}  {p}: {r.profiles[p]}" for p in self.profiles
                      if p in r.profiles]
        c = self.counts()
        lines.append(f"{len(self.results)} models: {c['pass']} pass, {c['fail']} fail, "
                     f"{c['error']} error, {c['skipped']} skipped ({self.seconds:.1f}s, "
                     f"{self.jobs} job(s), backend {self.backend} on {self.device})")
        return "\n".join(lines)
