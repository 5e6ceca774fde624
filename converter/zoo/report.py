"""Zoo reports: report.json (the stable JSON form), report.md (a summary table) and a
self-contained report.html (inline CSS and JS only; sortable table; per-model bars for the
error relative to the tolerance and for the time). Both human-readable reports end with a
"Skipped models" list giving each skipped model's reason (model file not available, slow
entry not run, ...). Models run in a real browser too (`webnn-convert zoo --browser`, which
adds a note starting with BROWSER_NOTE) get a "Real browser" column. Every string that comes from a model or
manifest is HTML-escaped (Markdown: pipes and newlines neutralised); no model-derived text is
placed inside the script.
"""

from __future__ import annotations

import html
import json
import math
import os
import tempfile
from pathlib import Path

from converter.zoo.records import ZooReport, ZooResult


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` through a temporary file beside it and one rename; the file
    gets the mode the umask gives (0644 under umask 022), as every other output."""
    from converter.io.export.exporter import current_umask

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_reports(report: ZooReport, folder: Path) -> list[Path]:
    """Write report.json, report.md and report.html into `folder` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [write_text_atomic(folder / "report.json", json.dumps(report.to_dict(), indent=2) + "\n"),
            write_text_atomic(folder / "report.md", render_markdown(report)),
            write_text_atomic(folder / "report.html", render_html(report))]


BROWSER_NOTE = "real browser: "
"""Prefix of the note `webnn-convert zoo --browser` adds to each model it ran there."""


def browser_verdict(r: ZooResult) -> str:
    """The real-browser verdict of a result ('' when it was not run in a browser)."""
    return next((n[len(BROWSER_NOTE):] for n in r.notes if n.startswith(BROWSER_NOTE)), "")


def _browser_column(report: ZooReport) -> bool:
    return any(browser_verdict(r) for r in report.results)


def _err(r: ZooResult) -> str:
    return f"{r.max_abs:.3g}" if r.max_abs is not None else ""


def _detail(r: ZooResult) -> str:
    if r.divergence:
        d = r.divergence
        text = (f"first diverging node: {d.get('op_type')} {d.get('node')!r} "
                f"(output {d.get('output')!r}, max abs {d.get('max_abs')})")
    else:
        text = r.message.splitlines()[0] if r.message else ""
    return "; ".join(filter(None, [text, r.retry_text()]))


def _md(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def render_markdown(report: ZooReport) -> str:
    c = report.counts()
    browser = _browser_column(report)
    lines = [f"# Model zoo report ({report.started})", "",
             f"Backend **{report.backend}** on **{report.device}**, {report.jobs} job(s), "
             f"{report.seconds:.1f} s.", "",
             f"**{len(report.results)} models: {c['pass']} pass, {c['fail']} fail, "
             f"{c['error']} error, {c['skipped']} skipped.**", "",
             "| Model | Format | Status | Max abs error | Max rel error | Tolerance (atol, "
             "rtol) | Convert s | Total s | WebNN ops | "
             + ("Real browser | " if browser else "")
             + "".join(f"{_md(p)} | " for p in report.profiles) + "Details |",
             "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if browser else "")
             + "---|" * len(report.profiles)]
    for r in report.results:
        rel = f"{r.max_rel:.3g}" if r.max_rel is not None else ""
        lines.append(f"| {_md(r.name)} | {_md(r.format)} | {r.status} | {_err(r)} | {rel} | "
                     f"{r.atol:g}, {r.rtol:g} | {r.timings.get('convert', 0.0):.2f} | "
                     f"{r.total_seconds:.2f} | {r.operations or ''} | "
                     + (f"{_md(browser_verdict(r))} | " if browser else "")
                     + "".join(f"{_md(r.profiles.get(p, ''))} | " for p in report.profiles)
                     + f"{_md(_detail(r))} |")
    skipped = _skipped(report)
    if skipped:
        lines += ["", "## Skipped models", ""]
        lines += [f"- **{_md(r.name)}**: {_md(_detail(r) or 'no reason given')}"
                  for r in skipped]
    return "\n".join(lines) + "\n"


def _skipped(report: ZooReport) -> list[ZooResult]:
    return [r for r in report.results if r.status == "skipped"]


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{cursor:pointer;background:#f4f4f4;user-select:none;white-space:nowrap}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#176f2c;font-weight:600}.fail{color:#b3261e;font-weight:600}
.error{color:#8a4b00;font-weight:600}.skipped{color:#777}
.bar{background:#eee;width:140px;height:10px;border-radius:2px;position:relative}
.bar span{display:block;height:10px;border-radius:2px}
.bar .ok{background:#4caf50}.bar .bad{background:#e53935}.bar .time{background:#1e88e5}
.bar i{position:absolute;left:70%;top:-2px;height:14px;border-left:1px dashed #333}
.detail{max-width:40em;word-break:break-word;white-space:pre-wrap;font-size:12px}
"""

_JS = """
document.querySelectorAll('th').forEach(function(th, col){
  th.addEventListener('click', function(){
    var table = th.closest('table'), body = table.tBodies[0];
    var asc = !th.classList.contains('asc');
    table.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});
    th.classList.add(asc ? 'asc' : 'desc');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function(a, b){
      var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
      var nx = parseFloat(x), ny = parseFloat(y), r;
      if (!isNaN(nx) && !isNaN(ny)) { r = nx - ny; } else { r = x < y ? -1 : x > y ? 1 : 0; }
      return asc ? r : -r;
    });
    rows.forEach(function(row){ body.appendChild(row); });
  });
});
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _error_bar(r: ZooResult) -> tuple[str, float]:
    """A bar whose dashed mark is the tolerance: log10(error / tolerance) mapped to width."""
    if r.max_abs is None or not r.outputs:
        return "", -1.0
    tol = max((float(o.get("tolerance") or 0.0) for o in r.outputs), default=0.0)
    err = r.max_abs
    if math.isinf(err) or math.isnan(err):
        ratio = 1e9
    elif tol > 0:
        ratio = err / tol
    else:
        ratio = 0.0 if err == 0 else 1e9
    # width 70% at the tolerance; one decade per 10%
    pos = 70.0 + 10.0 * math.log10(ratio) if ratio > 0 else 0.0
    pos = max(1.0, min(100.0, pos))
    cls = "ok" if ratio <= 1 else "bad"
    title = _e(f"max abs {err:.3g} / tolerance {tol:.3g}")
    return (f'<div class="bar" title="{title}"><span class="{cls}" style="width:{pos:.1f}%">'
            f"</span><i></i></div>"), ratio


def render_html(report: ZooReport) -> str:
    c = report.counts()
    longest = max((r.total_seconds for r in report.results), default=0.0) or 1.0
    browser = _browser_column(report)
    rows = []
    for r in report.results:
        bar, ratio = _error_bar(r)
        width = 100.0 * r.total_seconds / longest
        time_bar = (f'<div class="bar" title="{r.total_seconds:.2f} s"><span class="time" '
                    f'style="width:{max(width, 1.0):.1f}%"></span></div>')
        rel = f"{r.max_rel:.3g}" if r.max_rel is not None else ""
        rows.append(
            "<tr>"
            f'<td data-v="{_e(r.name)}">{_e(r.name)}<br><small>{_e(r.licence)}</small></td>'
            f'<td data-v="{_e(r.format)}">{_e(r.format)}</td>'
            f'<td data-v="{_e(r.status)}" class="{_e(r.status)}">{_e(r.status)}</td>'
            f'<td class="num" data-v="{_e(r.max_abs if r.max_abs is not None else -1)}">'
            f"{_e(_err(r))}</td>"
            f'<td class="num" data-v="{_e(r.max_rel if r.max_rel is not None else -1)}">'
            f"{_e(rel)}</td>"
            f'<td data-v="{ratio:.6g}">{bar}</td>'
            f'<td class="num" data-v="{r.timings.get("convert", 0.0):.6f}">'
            f'{r.timings.get("convert", 0.0):.2f}</td>'
            f'<td class="num" data-v="{r.total_seconds:.6f}">{r.total_seconds:.2f}</td>'
            f'<td data-v="{r.total_seconds:.6f}">{time_bar}</td>'
            f'<td class="num" data-v="{r.operations}">{r.operations or ""}</td>'
            + (f'<td class="detail" data-v="{_e(browser_verdict(r))}">'
               f"{_e(browser_verdict(r))}</td>" if browser else "")
            + "".join(f'<td class="detail" data-v="{_e(r.profiles.get(p, ""))}">'
                      f'{_e(r.profiles.get(p, ""))}</td>' for p in report.profiles)
            + f'<td class="detail" data-v="{_e(_detail(r))}">{_e(_detail(r))}</td>'
            "</tr>")
    head = ("<tr><th>Model</th><th>Format</th><th>Status</th><th>Max abs</th>"
            "<th>Max rel</th><th>Error vs tolerance</th><th>Convert s</th><th>Total s</th>"
            "<th>Time</th><th>WebNN ops</th>"
            + ("<th>Real browser</th>" if browser else "")
            + "".join(f"<th>{_e(p)}</th>" for p in report.profiles) + "<th>Details</th></tr>")
    skipped = ""
    if _skipped(report):
        items = "".join(f"<li><b>{_e(r.name)}</b>: {_e(_detail(r) or 'no reason given')}</li>"
                        for r in _skipped(report))
        skipped = f'<h2>Skipped models</h2><ul id="skipped">{items}</ul>'
    summary = (f"{len(report.results)} models: {c['pass']} pass, {c['fail']} fail, "
               f"{c['error']} error, {c['skipped']} skipped; backend {report.backend} on "
               f"{report.device}, {report.jobs} job(s), {report.seconds:.1f} s, started "
               f"{report.started}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>webnn-converter model zoo report</title>"
            f"<style>{_CSS}</style></head><body>"
            "<h1>Model zoo report</h1>"
            f"<p>{_e(summary)}</p>"
            "<p><small>Error bars: the dashed mark is the tolerance (atol + rtol &times; "
            "max|ref|), one decade per tenth of the bar. Click a column to sort.</small></p>"
            f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
            f"{skipped}"
            f"<script>{_JS}</script></body></html>\n")
