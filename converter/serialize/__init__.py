"""Readers and writers of the webnn-graph files (format doc: `.webnn` text, `.webnn.json`,
WGWT weights blob + manifest, `.safetensors` weights)."""
