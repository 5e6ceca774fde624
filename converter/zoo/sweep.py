"""Architecture-sweep tables: a zoo report of a sweep manifest (models/sweep_timm.toml,
models/sweep_hf.toml) summed up per family.

Each row of the report is placed at the stage where it stopped:

- exported: its model file was made (not a generator failure, crash or time-out of the
  generation: reason_code generator_failed, timeout, crashed, worker_lost before
  conversion);
- converted: `convert` succeeded (the row has a conversion time);
- validated: the converted graph ran and was compared (status pass or fail);
- matched: within tolerance of the original framework (status pass).

`family_table` gives per family (the manifest's `family` field; `kind` too when it has one)
these four counts and the first failure's reason; `profile_fits` converts each converted
model once more and lowers it for every target profile (`converter.passes.targets.apply_target`):
a profile column counts the models whose lowered graph lies inside the profile's limits.
`reason_key` folds failure messages into a few kinds for the "top failure reasons" list
(the unsupported op, the exporter's error type and operator, ...).

```bash
python -m converter.zoo.sweep models/sweep_timm.toml REPORT/report.json [--profiles all]
    [--fits FITS.json]   # with --profiles: saves the fits; without: reads them
```

Restrictions: rows are matched to manifest entries by name; rows the manifest lacks are
counted under family "?"; profile fits need the model files the report names (the
generated models' cache of the run) and convert them in this process.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from converter.zoo.manifest import ZooEntry, read_manifest
from converter.zoo.records import ZooReport, ZooResult

STAGES = ("exported", "converted", "validated", "matched")
_EXPORT_FAILURES = ("generator_failed", "timeout", "crashed", "worker_lost", "worker_crash",
                    "not_available")


def stage(r: ZooResult) -> int:
    """How many of STAGES the row reached (0: not exported ... 4: matched)."""
    if r.status == "pass":
        return 4
    if r.status == "fail":
        return 3
    if "convert" in r.timings:
        return 2
    if r.reason_code in _EXPORT_FAILURES or r.status == "skipped":
        return 0
    return 1


def reason_key(r: ZooResult) -> str:
    """A short kind of the row's failure ('' when it matched), for counting."""
    if r.status == "pass":
        return ""
    text = " ".join(r.message.split())
    if r.status == "fail":
        return "outputs outside tolerance"
    if r.reason_code in ("timeout", "crashed", "worker_lost", "skipped"):
        return f"{r.reason_code}: {text[:60]}"
    ops = re.findall(r"no handler for ([A-Za-z0-9_.]+)", text)
    if ops:
        return "unsupported op " + ", ".join(dict.fromkeys(ops))
    exporter = re.search(r"Exporting the operator '([^']+)'", text)
    if exporter:
        return f"exporter: operator {exporter.group(1)} not supported"
    if r.reason_code == "generator_failed":
        return "export: " + _shape(re.sub(r"^export: ", "", brief(text, 400)))[:70]
    code = f"[{r.reason_code}] " if r.reason_code else ""
    return code + re.sub(r"'[^']*'", "'…'", text)[:80]


_ANSI = re.compile(r"(?:\x1b|\\x1b)\[[0-9;]*m")
_GENERATOR = re.compile(r"^manifest '[^']*': entry '[^']*': generator '[^']*' failed: ")


def _shape(text: str) -> str:
    """`text` with its particulars (quoted names, parenthesised details, numbers) elided, so
    that failures of one kind count together."""
    text = re.sub(r"\([^()]*\)", "(…)", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    return re.sub(r"\b\d+\b", "N", text)


def brief(message: str, limit: int = 160) -> str:
    """A failure message on one line, without the manifest prefix of generator failures
    ("export: ..."), at most `limit` characters."""
    text = _ANSI.sub("", " ".join(message.split()))
    text = _GENERATOR.sub("export: ", text)
    text = re.sub(r"^export: (?:RuntimeError|ExportError): (?=\w+(?:Error|Exception): )",
                  "export: ", text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass(frozen=True)
class FamilyRow:
    """One family of a sweep: its rows' stage counts and first failure."""

    family: str
    kind: str
    rows: int
    counts: tuple[int, int, int, int]
    """exported, converted, validated, matched."""
    first_failure: str
    fits: Mapping[str, int] = field(default_factory=dict)


def _meta(entries: Sequence[ZooEntry]) -> dict[str, tuple[str, str]]:
    return {e.name: (str(e.extra.get("family", "?")), str(e.extra.get("kind", "")))
            for e in entries}


def family_table(report: ZooReport, entries: Sequence[ZooEntry],
                 fits: Mapping[str, Mapping[str, bool]] | None = None) -> list[FamilyRow]:
    """Per family (manifest order), see the module docstring; `fits` {row name: {profile:
    fits}} fills the profile columns."""
    meta = _meta(entries)
    groups: dict[str, list[ZooResult]] = {}
    for r in report.results:
        groups.setdefault(meta.get(r.name, ("?", ""))[0], []).append(r)
    out = []
    for family, rows in groups.items():
        reached = [stage(r) for r in rows]
        counts = tuple(sum(s > i for s in reached) for i in range(4))
        failed = next((r for r in rows if r.status != "pass"), None)
        first = f"{failed.name}: {brief(failed.message)}" if failed else ""
        profiles: dict[str, int] = {}
        for r in rows:
            for p, ok in (fits or {}).get(r.name, {}).items():
                profiles[p] = profiles.get(p, 0) + int(ok)
        out.append(FamilyRow(family, meta.get(rows[0].name, ("?", ""))[1], len(rows),
                             (counts[0], counts[1], counts[2], counts[3]), first, profiles))
    return out


def kind_counts(report: ZooReport, entries: Sequence[ZooEntry]
                ) -> dict[str, tuple[int, tuple[int, ...]]]:
    """{kind (+ "with past" for that variant): (rows, stage counts)} in first-seen order."""
    by_name = {e.name: e for e in entries}
    groups: dict[str, list[int]] = {}
    for r in report.results:
        e = by_name.get(r.name)
        kind = str(e.extra.get("kind", "?")) if e is not None else "?"
        if e is not None and e.extra.get("variant") == "with_past":
            kind += " with past"
        groups.setdefault(kind, []).append(stage(r))
    return {k: (len(v), tuple(sum(s > i for s in v) for i in range(4)))
            for k, v in groups.items()}


def totals(report: ZooReport) -> dict[str, int]:
    """Rows and how many reached each stage."""
    reached = [stage(r) for r in report.results]
    return {"rows": len(reached), **{s: sum(x > i for x in reached)
                                     for i, s in enumerate(STAGES)}}


def top_reasons(report: ZooReport, n: int = 10) -> list[tuple[str, int]]:
    """The `n` commonest failure kinds (`reason_key`) with their counts."""
    return Counter(k for k in map(reason_key, report.results) if k).most_common(n)


def profile_fits(report: ZooReport, entries: Sequence[ZooEntry], profiles: Sequence[str]
                 ) -> dict[str, dict[str, bool]]:
    """{row: {profile: whether its graph, lowered for the profile, fits its limits}} for
    every validated row whose model file exists (converted again here, once per row)."""
    from converter.conversion.pipeline import convert
    from converter.passes.targets import apply_target, load_target
    from converter.passes.targets.check import check_graph
    from converter.zoo.sources import convert_options, load_model

    by_name = {e.name: e for e in entries}
    targets = {p: load_target(p) for p in profiles}
    out: dict[str, dict[str, bool]] = {}
    for r in report.results:
        entry = by_name.get(r.name)
        if stage(r) < 3 or entry is None or not r.path or not Path(r.path).is_file():
            continue
        import dataclasses

        try:
            model = load_model(dataclasses.replace(entry, path=r.path, pending={}))
            result = convert(model, **convert_options(entry))
        except Exception:  # noqa: BLE001 - converted in the run: counted as not fitting
            out[r.name] = dict.fromkeys(profiles, False)
            continue
        row: dict[str, bool] = {}
        for p, target in targets.items():
            try:
                row[p] = not check_graph(apply_target(result, target).graph, target)
            except Exception:  # noqa: BLE001 - a rule that fails: does not fit
                row[p] = False
        out[r.name] = row
    return out


def _md(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def markdown(title: str, report: ZooReport, entries: Sequence[ZooEntry],
             fits: Mapping[str, Mapping[str, bool]] | None = None) -> str:
    """The sweep's section: totals, top failure reasons, the per-family table."""
    t = totals(report)
    rows = family_table(report, entries, fits)
    profiles = sorted({p for f in (fits or {}).values() for p in f})

    def pct(k: str) -> str:
        return f"{100.0 * t[k] / t['rows']:.0f}%" if t["rows"] else "-"

    lines = [f"## {title}", "",
             f"{len(rows)} families, {t['rows']} rows: exported {t['exported']} "
             f"({pct('exported')}), converted {t['converted']} ({pct('converted')}), "
             f"validated {t['validated']} ({pct('validated')}), matched {t['matched']} "
             f"({pct('matched')}).", "", "Top failure reasons:", ""]
    lines += [f"- {_md(k)}: {n}" for k, n in top_reasons(report)]
    if profiles:
        fit = {p: sum(r.fits.get(p, 0) for r in rows) for p in profiles}
        lines += ["", "Validated rows inside each profile's limits (after its rewrites): "
                  + ", ".join(f"{p} {n}" for p, n in fit.items()) + "."]
    kinds = any(r.kind for r in rows)
    if kinds:
        lines += ["", "By kind (the with_past rows of decoders apart):", "",
                  "| Kind | Rows | Exported | Converted | Validated | Matched |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {_md(k)} | {n} | " + " | ".join(map(str, c)) + " |"
                  for k, (n, c) in kind_counts(report, entries).items()]
    head = ["Family", *(["Kind"] if kinds else []), "Rows", "Exported", "Converted",
            "Validated", "Matched", *profiles, "First failure"]
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.family, *([r.kind] if kinds else []), str(r.rows),
                 *(str(c) for c in r.counts), *(str(r.fits.get(p, 0)) for p in profiles),
                 r.first_failure]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    from converter.passes.targets import known_targets
    from converter.zoo.shards import read_report

    parser = argparse.ArgumentParser(prog="python -m converter.zoo.sweep",
                                     description="Per-family table of a sweep's zoo report.")
    parser.add_argument("manifest", type=Path)
    parser.add_argument("report", type=Path)
    parser.add_argument("--title", default=None)
    parser.add_argument("--profiles", default=None, help="NAME,NAME or 'all'")
    parser.add_argument("--fits", type=Path, default=None,
                        help="profile fits as JSON: written with --profiles, read without")
    args = parser.parse_args(argv)
    entries = read_manifest(args.manifest, generate=False)
    report = read_report(args.report)
    fits = None
    if args.profiles:
        names = known_targets() if args.profiles == "all" else args.profiles.split(",")
        fits = profile_fits(report, entries, names)
        if args.fits:
            args.fits.write_text(json.dumps(fits, indent=1) + "\n", encoding="utf-8")
    elif args.fits:
        fits = json.loads(args.fits.read_text(encoding="utf-8"))
    sys.stdout.write(markdown(args.title or args.manifest.stem, report, entries, fits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
