"""`webnn-convert convert`: convert a model and write the outputs to a folder."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from cli.help import GroupedHelp
from cli.options import (
    allow_root_option,
    budget_options,
    common_options,
    model_options,
    precision_option,
    progress_option,
    target_option,
    want_progress,
)
from cli.output import CommandError, describe, emit_json, handled, progress_reporter, sigterm_raises
from cli.values import conversion_kwargs


@click.command(cls=GroupedHelp, first=("outdir", "fmt", "dims", "shapes", "target", "precision",
                                       "weights", "stem", "force"))
@click.argument("model", type=click.Path())
@click.option("-o", "--output", "outdir", default=None, type=click.Path(file_okay=False),
              help="Folder to write into [default: next to MODEL, named after it: "
                   "models/foo.onnx -> models/foo_webnn]. The files are written into a hidden "
                   "folder inside it and moved in once all are written (it may be a mount "
                   "point); a folder an earlier convert wrote is replaced (no stale files) "
                   "unless a file it lists was changed; any other non-empty folder needs "
                   "--force.")
@click.option("--format", "fmt",
              type=click.Choice(["webnn", "webnn-json", "js", "onnx", "all"]),
              default="webnn", show_default=True, help="What to write.")
@click.option("--weights", type=click.Choice(["blob", "safetensors"]), default="blob",
              show_default=True,
              help="Weights of the .webnn/.webnn.json graph: WGWT blob + manifest, or "
                   ".safetensors.")
@click.option("--stem", default=None,
              help="Base name of the files [default: MODEL's file name without its suffix, "
                   "with characters other than A-Z a-z 0-9 _ . - replaced by _: "
                   "foo.webnn, foo.weights, foo.manifest.json, foo.js, foo.html, foo.onnx].")
@click.option("--force", is_flag=True,
              help="Write into a non-empty folder that webnn-convert did not write: files of "
                   "the same names are replaced, nothing else is removed.")
@budget_options("max_export_bytes")
@model_options
@target_option
@precision_option
@allow_root_option
@progress_option
@common_options
def convert(model: str, outdir: str | None, fmt: str, weights: str, stem: str | None,
            force: bool, dims: tuple[str, ...], free_dims: tuple[str, ...],
            shapes: tuple[str, ...], pins: tuple[str, ...], signature: str | None,
            target: str | None, precision: str, allow_roots: tuple[str, ...], progress: bool | None,
            debug: bool, as_json: bool) -> None:
    """Convert MODEL (.onnx or .tflite) and write it to a folder (-o, default
    MODEL-STEM_webnn beside MODEL); print the conversion report.

    With --format js or all, serve the folder over HTTP to open the page
    (`python3 -m http.server` in it, then http://localhost:8000/STEM.html): browsers do not
    run it from file://. A decoder (past/present KV inputs and outputs) given no --dim,
    --free-dim or --shape becomes a generation runtime there: STEM.js with
    createGenerator(), its prefill and decode graphs over one weights file, and a page
    that streams generated token ids (docs/generation.md)."""
    say = progress_reporter(want_progress(progress, as_json))
    with handled(debug, as_json), sigterm_raises():
        from converter.api import (
            FolderNotOurs,
            check_outdir,
            convert,
            default_outdir,
            default_stem,
            detect_format,
            export,
            generator_graphs,
            is_decoder,
        )

        kwargs = conversion_kwargs(dims, shapes, pins, signature, free_dims)
        folder = outdir if outdir is not None else str(default_outdir(model))
        name = stem if stem is not None else default_stem(model)
        try:
            check_outdir(folder, force=force)
        except FolderNotOurs as exc:
            raise CommandError(f"{folder}: {exc.reason}; use --force to write into it anyway "
                               "(same-named files are replaced, nothing is removed)"
                               ) from None
        if Path(folder).is_dir() and Path(model).resolve().is_relative_to(
                Path(folder).resolve()):
            raise CommandError(f"{folder}: the output folder contains the model {model}; "
                               "write to another folder (-o)")
        source_format = detect_format(model)
        if fmt in ("js", "all") and not (dims or free_dims or shapes) and is_decoder(model):
            say(f"converting the decode and prefill steps of {model}")
            graphs = generator_graphs(model, name=name, allow_roots=allow_roots,
                                      target=target, precision=precision,
                                      budgets=kwargs["budgets"])
            written = export(graphs, folder, format=fmt, stem=name, force=force,
                             budgets=kwargs["budgets"])
            if as_json:
                emit_json({"model": model, "format": source_format, "outdir": folder,
                           "stem": name, "files": [str(p) for p in written],
                           "generator": {"max_length": graphs.max_length,
                                         "prefill_chunk": graphs.chunk}})
                return
            click.echo(f"converted the decoder {model} ({source_format}) -> {folder}: a "
                       f"generator with a KV cache of {graphs.max_length} positions")
            for p in written:
                click.echo(f"  wrote {p}")
            click.echo(f"  open the page: cd {shlex.quote(folder)} && python3 -m http.server, "
                       f"then http://localhost:8000/{name}.html (not from file://)")
            return
        say(f"converting {model}")
        with say.nodes("converting"):
            result = convert(model, **kwargs, fmt=source_format, allow_roots=allow_roots,
                             target=target, precision=precision)
        if result.report.outside_target:  # never a graph its target cannot build
            lacks = result.report.outside_target
            message = (f"{model}: the converted graph uses what target {result.report.target} "
                       f"lacks ({len(lacks)} kind(s)): {'; '.join(lacks)}; nothing was "
                       "written. Convert for another target (--target NAME, `webnn-convert "
                       "targets` lists them; --target spec: the unrestricted graph)")
            raise CommandError(message, data={"reason_code": "outside_target",
                                              "message": message, "target":
                                              result.report.target, "lacks": lacks})
        say(f"writing {fmt} files to {folder}")
        try:
            written = export(result, folder, format=fmt, stem=name, weights=weights,
                             force=force, budgets=kwargs["budgets"])
        except FolderNotOurs as exc:
            raise CommandError(f"{folder}: {exc.reason}; use --force to write into it anyway"
                               ) from None
        page = next((p for p in written if p.suffix == ".html"), None)
        if as_json:
            emit_json({"model": model, "format": source_format, "outdir": folder,
                        "stem": name, "files": [str(p) for p in written],
                        "inputs": [{"name": v.name, "dtype": v.dtype,
                                    "shape": list(v.shape or ())} for v in result.inputs],
                        "outputs": [{"name": v.name, "dtype": v.dtype,
                                     "shape": list(v.shape or ())} for v in result.outputs],
                        "operations": len(result.graph.operations),
                        "target": result.report.target, "precision": precision,
                        "report": result.report.to_dict()})
            return
        click.echo(f"converted {model} ({source_format}) -> {folder} "
                   f"({len(result.graph.operations)} WebNN operations)")
        for p in written:
            click.echo(f"  wrote {p}")
        if page is not None:
            click.echo(f"  open the page: cd {shlex.quote(folder)} && python3 -m http.server, then "
                       f"http://localhost:8000/{page.name} (not from file://)")
        click.echo("inputs:  " + "; ".join(describe(v) for v in result.inputs))
        click.echo("outputs: " + "; ".join(describe(v) for v in result.outputs))
        counts = result.report.counts()
        click.echo("report: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v))
        text = result.report.to_text()
        if text:
            click.echo("\n".join(f"  {line}" for line in text.splitlines()))
