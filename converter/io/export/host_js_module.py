"""The parts of the exported ES module (`converter.io.export.javascript`) for a model with
host steps (docs/host-steps-js.md): `GRAPH_OUTPUTS` (what the WebNN graph computes: the
model outputs it gives plus the boundary values the steps read), `OUTPUTS` (the model's
outputs in model order; `shape: null` for those the host steps give, whose shapes depend on
the data) and a `createModel` whose `compute(feeds)` dispatches the graph, runs
`runHostSteps` on its outputs (and the model inputs the steps read) and resolves to
`{output name: typed array}`; `INPUTS` also lists the model inputs only the host steps read
(`hostOnly: true`: no graph tensor); `computeTensors(feeds)` resolves to `{output name: {dataType,
shape, data}}`. Boundary values that are not model outputs are not returned. Carried state
and narrowed inputs/outputs work as in a module without host steps. Constants of the steps
over `HOST_EMBED_LIMIT` bytes in all are not embedded: createModel's `loadHostSteps()` reads
them from `<stem>.host.json`, which `export()` writes beside the module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from converter.core.ir import ValueInfo
from converter.core.webnn import MLGraph
from converter.io.export.literals import js_string
from converter.io.serialize.errors import WebnnExportError

__all__ = ["HOST_CREATE_MODEL", "HOST_EMBED_LIMIT", "host_input_rows", "host_output_rows", "host_only_inputs",
           "model_outputs"]

HOST_CREATE_MODEL = r"""
/**
 * Build the graph on `context` (weights: loadWeights(), streamed, unless given) and create
 * its tensors and load the host steps meanwhile, once. compute(feeds) writes {input name:
 * typed array}, runs the graph, then the host steps (runHostSteps: the model's
 * data-dependent tail), and resolves to {output name: typed array} for every output of
 * OUTPUTS; computeTensors(feeds) resolves to {output name: {dataType, shape, data}} (the
 * host steps' outputs have data-dependent shapes). destroy() frees the graph and its
 * tensors.__STATE_DOC__
 */
export async function createModel(context, weights = loadWeights()) {
  const tensors = async (descs, usage) => Object.fromEntries(await Promise.all(descs.map(async (d) => [d.name, await context.createTensor({...d, ...usage})])));
  const [graph, inputTensors, outputTensors] = await Promise.all([buildGraph(context, weights),
    tensors(INPUTS.filter((d) => !d.hostOnly), {writable: true}), tensors(GRAPH_OUTPUTS, {readable: true}),
    weights, loadHostSteps()]);__STATE_SETUP__
  const computeTensors = async (feeds) => {
    const given = new Map();
    for (const d of INPUTS) {__INPUT_CHECK__
      given.set(d.name, {dataType: d.sourceDataType ?? d.dataType, shape: d.shape, data: __VALUE__});
      if (!d.hostOnly) context.writeTensor(inputTensors[d.name], __FEED__);
    }
    context.dispatch(graph, inputTensors, outputTensors);
    const read = await Promise.all(GRAPH_OUTPUTS.map((d) => context.readTensor(outputTensors[d.name])));
    const computed = new Map(GRAPH_OUTPUTS.map((d, i) => [d.name,
      {dataType: d.sourceDataType ?? d.dataType, shape: d.shape, data: __RESULT__}]));__STATE_UPDATE__
    const host = runHostSteps(Object.fromEntries(HOST_INPUTS.map(({name, source}) =>
      [name, (source === "graph" ? computed : given).get(name)])));
    return Object.fromEntries(OUTPUTS.map((d) =>
      [d.name, Object.hasOwn(host, d.name) ? host[d.name] : computed.get(d.name)]));
  };
  const compute = async (feeds) => {
    const outputs = await computeTensors(feeds);
    return Object.fromEntries(OUTPUTS.map((d) => [d.name, outputs[d.name].data]));
  };
  const destroy = () => [graph, ...Object.values(inputTensors), ...Object.values(outputTensors)].forEach((t) => t.destroy());
  return {inputs: INPUTS, outputs: OUTPUTS, compute, computeTensors, __RESET__destroy};
}
"""
"""createModel of a module with host steps (placeholders as javascript's `_CREATE_MODEL`,
plus `__VALUE__` and `__STATE_UPDATE__`)."""

HOST_EMBED_LIMIT = 1 << 20
"""Host-step constants up to this many bytes in all are embedded in the module."""

STATE_UPDATE = """
    for (const s of STATE) state.set(s.input, computed.get(s.output).data);"""


def _host_outputs(host: Mapping[str, Any]) -> list[str]:
    outputs = host.get("outputs")
    if not isinstance(outputs, list) or not all(isinstance(n, str) for n in outputs):
        raise WebnnExportError("host steps: outputs must be a list of names")
    return outputs


def model_outputs(graph: MLGraph, host: Mapping[str, Any],
                  outputs: Sequence[ValueInfo] | None) -> Sequence[tuple[str, str | None]]:
    """(name, data type) of the model's outputs in model order: `outputs` where given (a
    result's `outputs`), else the graph outputs the host steps do not read, then the host
    steps' outputs (data type unknown)."""
    given = _host_outputs(host)
    if outputs is not None:
        return [(o.name, o.dtype) for o in outputs]
    boundary = {i.get("name") for i in host.get("inputs", []) if isinstance(i, Mapping)
                and i.get("source") == "graph"}
    names = [n for n in graph.outputs if n not in boundary and n not in given] + given
    return [(n, None) for n in names]


def host_output_rows(graph: MLGraph, host: Mapping[str, Any],
                     outputs: Sequence[ValueInfo] | None) -> list[str]:
    """The `OUTPUTS` rows of a module with host steps: a graph-computed output as in
    `GRAPH_OUTPUTS` (its `sourceDataType` too), a host-step output with `shape: null`."""
    given = set(_host_outputs(host))
    rows = []
    for name, dtype in model_outputs(graph, host, outputs):
        if name not in given and name in graph.outputs:
            operand = graph.outputs[name]
            source = graph.narrowed_outputs.get(name)
            rows.append(f"{{name: {js_string(name)}, dataType: {js_string(operand.data_type)}, "
                        f"shape: [{', '.join(str(d) for d in operand.shape)}]"
                        + (f", sourceDataType: {js_string(source)}" if source else "") + "}")
        elif name in given:
            data_type = js_string(dtype) if dtype else "null"
            rows.append(f"{{name: {js_string(name)}, dataType: {data_type}, shape: null}}")
        else:
            raise WebnnExportError(f"output {name!r}: neither the graph nor the host steps "
                                   "compute it")
    return rows


def host_only_inputs(graph: MLGraph, host: Mapping[str, Any],
                     inputs: Sequence[ValueInfo] | None) -> list[tuple[str, str, tuple[int, ...]]]:
    """(name, data type, shape) of the model inputs the host steps read that the graph does
    not take (from `inputs`, a result's `inputs`, whose shapes are static)."""
    names = [i.get("name") for i in host.get("inputs", []) if isinstance(i, Mapping)
             and i.get("source") == "input" and i.get("name") not in graph.inputs]
    known = {vi.name: vi for vi in inputs or ()}
    rows = []
    for name in names:
        vi = known.get(str(name))
        if vi is None or vi.shape is None or not all(isinstance(d, int) for d in vi.shape):
            raise WebnnExportError(f"host steps: model input {name!r} (read by the host steps "
                                   "only) needs its data type and static shape: pass the "
                                   "result's inputs")
        rows.append((vi.name, vi.dtype, tuple(int(d) for d in vi.shape if isinstance(d, int))))
    return rows


def host_input_rows(graph: MLGraph, host: Mapping[str, Any],
                    inputs: Sequence[ValueInfo] | None) -> list[str]:
    """The extra `INPUTS` rows of a module with host steps (`hostOnly: true`)."""
    return [f"{{name: {js_string(n)}, dataType: {js_string(t)}, "
            f"shape: [{', '.join(str(d) for d in shape)}], hostOnly: true}}"
            for n, t, shape in host_only_inputs(graph, host, inputs)]
