"""Exporters: write an MLGraph in formats other tools read.

`export(result_or_graph, outdir, format="webnn"|"webnn-json"|"js"|"onnx"|"all",
weights="blob"|"safetensors")` writes files atomically (`converter.io.export.exporter`);
`load(path)` reads a `.webnn` graph back. The ONNX form is the onnxruntime runtime's lowering
(`converter.runtimes.onnxruntime.to_onnx`). Submodules are imported on demand so that
exporting to one format never requires the libraries of another.
"""
