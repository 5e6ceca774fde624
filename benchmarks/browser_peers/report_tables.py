"""The markdown tables and the issue's bars of a browser_peers.py report (its JSON dict), and
the writing of a report (also browser_llm.py's)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PEER_LABELS = {"ort-webnn": "ORT WebNN", "ort-wasm": "ORT WASM", "litert": "LiteRT.js"}
OURS = ("ours-default", "ours-chromium-tflite")
RECURRENT = ("lstm", "gru")


def geomean(values: Sequence[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _x(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _size(value: int | None) -> str:
    return "" if value is None else f"{value / 1e6:.2f} MB" if value >= 1e5 else \
        f"{value / 1e3:.1f} KB"


def _ratio(report: Mapping[str, Any], model: str, ours: str, peer: str, key: str
           ) -> float | None:
    for r in report["ratios"]:
        if (r["model"], r["ours"], r["peer"]) == (model, ours, peer):
            value = r.get(key)
            return float(value) if value is not None else None
    return None


def bars(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The issue's bars per ours variant: median <= 1.0x ORT WebNN on every ONNX model and
    geomean <= 0.9x; LSTM/GRU median <= 1.0x ORT WASM; first result <= 0.5x onnxruntime-web
    (both providers; LiteRT.js for the TFLite models). `worst` is the largest ratio and
    `worst_at` where; `pass` is None when nothing was measured for the bar."""
    out = []
    models = list(report["rows"])
    for ours in OURS:
        def check(name: str, peers: Sequence[str], key: str, limit: float,
                  only: Sequence[str] = (), ours: str = ours) -> None:
            found = [(v, f"{m} vs {PEER_LABELS[p]}") for m in models for p in peers
                     if (not only or any(o in m for o in only))
                     and (v := _ratio(report, m, ours, p, key)) is not None]
            worst = max(found, default=None)
            out.append({"ours": ours, "bar": name, "limit": limit, "measured": len(found),
                        "worst": worst[0] if worst else None,
                        "worst_at": worst[1] if worst else "",
                        "pass": None if worst is None else worst[0] <= limit})
        check("median <= 1.0x ORT WebNN, every model", ["ort-webnn"], "median_ms", 1.0)
        g = geomean([v for m in models if (v := _ratio(report, m, ours, "ort-webnn",
                                                       "median_ms")) is not None])
        out.append({"ours": ours, "bar": "median geomean <= 0.9x ORT WebNN", "limit": 0.9,
                    "worst": g, "worst_at": "geomean", "pass": None if g is None else g <= 0.9})
        check("LSTM/GRU median <= 1.0x ORT WASM", ["ort-wasm"], "median_ms", 1.0, RECURRENT)
        check("first result <= 0.5x onnxruntime-web / LiteRT.js, every model",
              ["ort-webnn", "ort-wasm", "litert"], "first_ms", 0.5)
    return out


def markdown(report: Mapping[str, Any]) -> str:
    """The report as markdown: set-up line, ratio table, detail table, bars."""
    page = report.get("page") or {}
    peers = report.get("peers") or {}
    lines = [
        f"Chromium {report.get('browser')} (headless; WebNN on the CPU: LiteRT/XNNPACK); "
        f"onnxruntime-web {peers.get('onnxruntime-web')}, @litertjs/core "
        f"{peers.get('@litertjs/core')}; the peers' wasm threads: {page.get('threads')} "
        f"(crossOriginIsolated: {str(page.get('crossOriginIsolated')).lower()}, "
        f"hardwareConcurrency {page.get('hardwareConcurrency')}); steady state: "
        f"{report['rounds']} interleaved rounds after {report['warmup']} warm-up runs; "
        f"first result: median of {report['cold_rounds']} fresh pages per runtime.", "",
        "Ratios ours / peer (below 1: ours is faster; per round: the median of the ratios "
        "of the two runs of one round):", "",
        "| model | ours | median / ORT WebNN | per round / ORT WebNN | median / ORT WASM "
        "| per round / ORT WASM | median / LiteRT.js | per round / LiteRT.js "
        "| first result / ORT WebNN | first result / ORT WASM | first result / LiteRT.js |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    peers_order = ("ort-webnn", "ort-wasm", "litert")
    for ours in OURS:
        for model in report["rows"]:
            cells = [_x(_ratio(report, model, ours, p, key)) for p in peers_order
                     for key in ("median_ms", "round_ratio_median")]
            cells += [_x(_ratio(report, model, ours, p, "first_ms")) for p in peers_order]
            lines.append(f"| {model} | {ours[5:]} | " + " | ".join(cells) + " |")
        def mean(key: str, peer: str, ours: str = ours) -> str:
            return _x(geomean([v for m in report["rows"]
                               if (v := _ratio(report, m, ours, peer, key)) is not None]))
        cells = [mean(key, p) for p in peers_order for key in ("median_ms", "round_ratio_median")]
        cells += [mean("first_ms", p) for p in peers_order]
        lines.append(f"| **geomean** | {ours[5:]} | " + " | ".join(cells) + " |")
    lines += ["", "Per runtime:", "",
              "| model | runtime | first result (ms) | median (ms) | p90 (ms) | max abs error "
              "| within 1e-3 | shipped | shipped (gzip) | error |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for model, per in report["rows"].items():
        for runtime, row in per.items():
            err = row.get("max_abs")
            ok = row.get("ok")
            lines.append(
                f"| {model} | {runtime} | {_ms(row.get('first_ms'))} | "
                f"{_ms(row.get('median_ms'))} | {_ms(row.get('p90_ms'))} | "
                f"{'' if err is None else f'{err:.2g}'} | "
                f"{'' if ok is None else 'yes' if ok else '**no**'} | "
                f"{_size(row.get('bytes_raw'))} | {_size(row.get('bytes_gzip'))} | "
                f"{str(row.get('error', '')).replace('|', '/')[:160]} |")
    lines += ["", "The issue's bars:", "", "| ours | bar | worst | where | met |",
              "|---|---|---|---|---|"]
    for b in bars(report):
        lines.append(f"| {b['ours'][5:]} | {b['bar']} | {_x(b['worst'])} | {b['worst_at']} "
                     f"| {'n/a' if b['pass'] is None else 'yes' if b['pass'] else '**no**'} |")
    return "\n".join(lines) + "\n"


def write_report(report: Mapping[str, Any], text: str, out: Path | None) -> None:
    """Prints the markdown `text`; with `out`, also writes OUT.json (`report`) and OUT.md."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(report, indent=1))
        out.with_suffix(".md").write_text(text)
