"""JavaScript of the host steps' shape, indexing, conversion and scatter operators
(onnxruntime's semantics; `converter.io.export.host_js` writes the ones a model uses).

Restrictions: Cast takes the numeric types and bool (not strings, not float8); a float cast to
int64 that is NaN or infinite gives -2^63 (as onnxruntime on x86); Constant takes value,
value_float(s) and value_int(s); Pad's modes are constant, edge, reflect and wrap; opset
differences are read from the node itself (inputs from opset 10/11/13/18 where present, the
attributes of earlier opsets otherwise).
"""

from __future__ import annotations

from converter.io.export.host_js_runtime import JsOp

__all__ = ["SHAPE_HELPERS", "SHAPE_OPS"]

_ONNX_TYPES = """
const ONNX_TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
  7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"};
"""

_REDUCTIONS = r"""
/** ScatterND / ScatterElements `reduction`: the function combining the old and new value. */
function scatterReduction(node) {
  const kind = node.attributes.reduction ?? "none";
  const fns = {none: (old, v) => v, add: (old, v) => old + v, mul: (old, v) => old * v,
               max: (old, v) => Math.max(old, v), min: (old, v) => Math.min(old, v)};
  if (!Object.hasOwn(fns, kind)) throw new TypeError(`reduction ${JSON.stringify(kind)} is not supported`);
  return fns[kind];
}
"""

SHAPE_HELPERS = {"onnxTypes": _ONNX_TYPES, "scatterReduction": _REDUCTIONS}
"""Helpers of these operators, by name."""

SHAPE_OPS: dict[str, JsOp] = {
    "Shape": JsOp("""
function opShape(node, [x]) {
  const rank = x.shape.length, clamp = (v) => Math.min(Math.max(v < 0 ? v + rank : v, 0), rank);
  const dims = x.shape.slice(clamp(node.attributes.start ?? 0), clamp(node.attributes.end ?? rank));
  return [makeTensor("int64", [dims.length], Float64Array.from(dims))];
}
"""),
    "Size": JsOp("""
function opSize(node, [x]) {
  return [makeTensor("int64", [], Float64Array.of(x.data.length))];
}
"""),
    "Reshape": JsOp("""
function opReshape(node, [x, shapeTensor]) {
  // 0 copies the input's dimension (unless allowzero), -1 is inferred
  const allowZero = node.attributes.allowzero ?? 0;
  const shape = intsOf(shapeTensor).map((d, i) => (d === 0 && !allowZero ? x.shape[i] : d));
  const unknown = shape.indexOf(-1);
  if (unknown >= 0) {
    const known = sizeOf(shape.filter((_, i) => i !== unknown));
    shape[unknown] = known ? x.data.length / known : 0;
  }
  if (sizeOf(shape) !== x.data.length || !shape.every(Number.isInteger)) {
    throw new RangeError(`cannot reshape [${x.shape}] to [${intsOf(shapeTensor)}]`);
  }
  return [makeTensor(x.dataType, shape, x.data)];
}
"""),
    "Flatten": JsOp("""
function opFlatten(node, [x]) {
  const rank = x.shape.length, raw = node.attributes.axis ?? 1, axis = raw < 0 ? raw + rank : raw;
  return [makeTensor(x.dataType, [sizeOf(x.shape.slice(0, axis)), sizeOf(x.shape.slice(axis))], x.data)];
}
"""),
    "Squeeze": JsOp("""
function opSqueeze(node, [x, axesTensor]) {
  const rank = x.shape.length;
  const given = axesTensor ? intsOf(axesTensor) : node.attributes.axes;
  const axes = given ? given.map((a) => normAxis(a, rank)) : x.shape.flatMap((d, i) => (d === 1 ? [i] : []));
  for (const a of axes) if (x.shape[a] !== 1) throw new RangeError(`cannot squeeze axis ${a} of [${x.shape}]`);
  return [makeTensor(x.dataType, x.shape.filter((_, i) => !axes.includes(i)), x.data)];
}
"""),
    "Unsqueeze": JsOp("""
function opUnsqueeze(node, [x, axesTensor]) {
  const given = axesTensor ? intsOf(axesTensor) : node.attributes.axes;
  const rank = x.shape.length + given.length;
  const axes = given.map((a) => normAxis(a, rank));
  const rest = [...x.shape];
  const shape = Array.from({length: rank}, (_, i) => (axes.includes(i) ? 1 : rest.shift()));
  return [makeTensor(x.dataType, shape, x.data)];
}
"""),
    "Concat": JsOp("""
function opConcat(node, inputs) {
  const first = inputs[0], axis = normAxis(node.attributes.axis, first.shape.length);
  const shape = [...first.shape];
  shape[axis] = inputs.reduce((n, t) => n + t.shape[axis], 0);
  const out = makeTensor(first.dataType, shape);
  const outer = sizeOf(shape.slice(0, axis)), inner = sizeOf(shape.slice(axis + 1));
  let pos = 0;
  for (let o = 0; o < outer; o++) {
    for (const t of inputs) {
      const block = t.shape[axis] * inner;
      out.data.set(t.data.subarray(o * block, (o + 1) * block), pos);
      pos += block;
    }
  }
  return [out];
}
"""),
    "Split": JsOp("""
function opSplit(node, [x, splitTensor]) {
  const axis = normAxis(node.attributes.axis ?? 0, x.shape.length), dim = x.shape[axis];
  const count = node.attributes.num_outputs ?? node.outputs.length;
  let sizes = splitTensor ? intsOf(splitTensor) : node.attributes.split;
  if (!sizes) {
    const chunk = Math.ceil(dim / count);  // opset 18: the last chunk may be smaller
    sizes = Array.from({length: count}, (_, i) => Math.max(0, Math.min(chunk, dim - i * chunk)));
  }
  const outer = sizeOf(x.shape.slice(0, axis)), inner = sizeOf(x.shape.slice(axis + 1));
  let begin = 0;
  return sizes.map((size) => {
    const out = makeTensor(x.dataType, x.shape.map((d, i) => (i === axis ? size : d)));
    for (let o = 0; o < outer; o++) {
      const start = (o * dim + begin) * inner;
      out.data.set(x.data.subarray(start, start + size * inner), o * size * inner);
    }
    begin += size;
    return out;
  });
}
"""),
    "Transpose": JsOp("""
function opTranspose(node, [x]) {
  const perm = node.attributes.perm ?? x.shape.map((_, i) => x.shape.length - 1 - i);
  const strides = stridesOf(x.shape), shape = perm.map((p) => x.shape[p]);
  const out = makeTensor(x.dataType, shape);
  forEachIndex(shape, (index, k) => {
    let offset = 0;
    for (let d = 0; d < perm.length; d++) offset += index[d] * strides[perm[d]];
    out.data[k] = x.data[offset];
  });
  return [out];
}
""", ("coordinates",)),
    "Cast": JsOp("""
function opCast(node, [x]) {
  const to = ONNX_TYPES[node.attributes.to];
  if (!to) throw new TypeError(`Cast to ONNX type ${node.attributes.to} is not supported`);
  const convert = to === "bool" ? (v) => (v !== 0 ? 1 : 0)
    : to === "float16" ? (v) => halfToFloat(floatToHalf(v))
    : to === "int64" ? (v) => (Math.abs(v) < 2 ** 63 ? Math.trunc(v) : -(2 ** 63))
    : isFloat(to) ? (v) => v : (v) => Math.trunc(v);
  return [unary(x, convert, to)];
}
""", ("unary", "onnxTypes")),
    "If": JsOp("""
function opIf(node, [condition], opset, env) {
  // the chosen branch runs on the values defined so far; what it defines stays inside
  const branch = condition.data[0] ? node.attributes.then_branch : node.attributes.else_branch;
  const inner = new Map(env);
  runNodes(branch.nodes, inner);
  return branch.outputs.map((name) => inner.get(name));
}
"""),
    "Constant": JsOp("""
function opConstant(node) {
  const a = node.attributes;
  if (a.value) return [a.value];
  if (a.value_float !== undefined) return [makeTensor("float32", [], Float32Array.of(a.value_float))];
  if (a.value_floats) return [makeTensor("float32", [a.value_floats.length], Float32Array.from(a.value_floats))];
  if (a.value_int !== undefined) return [makeTensor("int64", [], Float64Array.of(a.value_int))];
  if (a.value_ints) return [makeTensor("int64", [a.value_ints.length], Float64Array.from(a.value_ints))];
  throw new TypeError("only value, value_float(s) and value_int(s) constants are supported");
}
"""),
    "ConstantOfShape": JsOp("""
function opConstantOfShape(node, [shapeTensor]) {
  const value = node.attributes.value;
  const out = makeTensor(value ? value.dataType : "float32", intsOf(shapeTensor));
  if (value) out.data.fill(value.data[0]);
  return [out];
}
"""),
    "Range": JsOp("""
function opRange(node, [start, limit, delta]) {
  const first = scalarOf(start), step = scalarOf(delta), float32 = start.dataType === "float32";
  const span = float32 ? Math.fround(scalarOf(limit) - first) : scalarOf(limit) - first;
  const out = makeTensor(start.dataType, [Math.max(Math.ceil(span / step), 0)]);
  // onnxruntime adds delta again and again in the output type
  for (let i = 0, v = first; i < out.data.length; i++) {
    out.data[i] = v;
    v = float32 ? Math.fround(v + step) : v + step;
  }
  return [out];
}
"""),
    "Expand": JsOp("""
function opExpand(node, [x, shapeTensor]) {
  const shape = broadcastShape([x.shape, intsOf(shapeTensor)]);
  const offsets = broadcastOffsets(x.shape, shape), out = makeTensor(x.dataType, shape);
  for (let k = 0; k < offsets.length; k++) out.data[k] = x.data[offsets[k]];
  return [out];
}
""", ("broadcast",)),
    "Tile": JsOp("""
function opTile(node, [x, repeats]) {
  const times = intsOf(repeats), strides = stridesOf(x.shape);
  const shape = x.shape.map((d, i) => d * times[i]), out = makeTensor(x.dataType, shape);
  forEachIndex(shape, (index, k) => {
    let offset = 0;
    for (let d = 0; d < shape.length; d++) offset += (index[d] % x.shape[d]) * strides[d];
    out.data[k] = x.data[offset];
  });
  return [out];
}
""", ("coordinates",)),
    "Slice": JsOp("""
function opSlice(node, [x, startsTensor, endsTensor, axesTensor, stepsTensor]) {
  // starts/ends/axes/steps: inputs from opset 10, attributes before
  const a = node.attributes, rank = x.shape.length;
  const starts = startsTensor ? intsOf(startsTensor) : a.starts;
  const ends = endsTensor ? intsOf(endsTensor) : a.ends;
  const axes = axesTensor ? intsOf(axesTensor) : a.axes ?? starts.map((_, i) => i);
  const steps = stepsTensor ? intsOf(stepsTensor) : starts.map(() => 1);
  const begin = new Array(rank).fill(0), step = new Array(rank).fill(1), shape = [...x.shape];
  const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
  axes.forEach((raw, i) => {
    const axis = normAxis(raw, rank), dim = x.shape[axis], s = steps[i];
    if (s === 0) throw new RangeError("a step of 0");
    const b = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
    const [from, to] = s > 0 ? [clamp(b, 0, dim), clamp(e, 0, dim)] : [clamp(b, 0, dim - 1), clamp(e, -1, dim - 1)];
    begin[axis] = from;
    step[axis] = s;
    shape[axis] = Math.max(0, Math.ceil((to - from) / s));
  });
  const strides = stridesOf(x.shape), out = makeTensor(x.dataType, shape);
  forEachIndex(shape, (index, k) => {
    let offset = 0;
    for (let d = 0; d < rank; d++) offset += (begin[d] + index[d] * step[d]) * strides[d];
    out.data[k] = x.data[offset];
  });
  return [out];
}
""", ("coordinates",)),
    "Gather": JsOp("""
function opGather(node, [x, indices]) {
  const axis = normAxis(node.attributes.axis ?? 0, x.shape.length);
  return [gatherAxis(x, intsOf(indices), axis, indices.shape)];
}
""", ("gatherAxis",)),
    "GatherElements": JsOp("""
function opGatherElements(node, [x, indices]) {
  const axis = normAxis(node.attributes.axis ?? 0, x.shape.length), dim = x.shape[axis];
  const strides = stridesOf(x.shape), out = makeTensor(x.dataType, indices.shape);
  forEachIndex(indices.shape, (index, k) => {
    const raw = indices.data[k], i = raw < 0 ? raw + dim : raw;
    if (!(i >= 0 && i < dim)) throw new RangeError(`index ${raw} is out of range for a dimension of ${dim}`);
    let offset = 0;
    for (let d = 0; d < index.length; d++) offset += (d === axis ? i : index[d]) * strides[d];
    out.data[k] = x.data[offset];
  });
  return [out];
}
""", ("coordinates",)),
    "GatherND": JsOp("""
function opGatherND(node, [x, indices]) {
  const b = node.attributes.batch_dims ?? 0, q = indices.shape.at(-1);
  const inBatch = x.shape.slice(b), strides = stridesOf(inBatch);
  const sliceShape = x.shape.slice(b + q), sliceSize = sizeOf(sliceShape), batchSize = sizeOf(inBatch);
  const perBatch = sizeOf(indices.shape.slice(b, -1)), batches = sizeOf(x.shape.slice(0, b));
  const out = makeTensor(x.dataType, [...indices.shape.slice(0, -1), ...sliceShape]);
  for (let n = 0; n < batches; n++) {
    for (let j = 0; j < perBatch; j++) {
      let offset = n * batchSize;
      for (let t = 0; t < q; t++) {
        const raw = indices.data[(n * perBatch + j) * q + t], dim = inBatch[t], i = raw < 0 ? raw + dim : raw;
        if (!(i >= 0 && i < dim)) throw new RangeError(`index ${raw} is out of range for a dimension of ${dim}`);
        offset += i * strides[t];
      }
      const to = (n * perBatch + j) * sliceSize;
      if (sliceSize === 1) out.data[to] = x.data[offset];
      else out.data.set(x.data.subarray(offset, offset + sliceSize), to);
    }
  }
  return [out];
}
"""),
    "ScatterND": JsOp("""
function opScatterND(node, [x, indices, updates]) {
  const combine = scatterReduction(node), q = indices.shape.at(-1), strides = stridesOf(x.shape);
  const sliceSize = sizeOf(x.shape.slice(q)), count = sizeOf(indices.shape.slice(0, -1));
  const out = makeTensor(x.dataType, x.shape, x.data.slice());
  for (let j = 0; j < count; j++) {
    let offset = 0;
    for (let t = 0; t < q; t++) {
      const raw = indices.data[j * q + t];
      offset += (raw < 0 ? raw + x.shape[t] : raw) * strides[t];
    }
    for (let e = 0; e < sliceSize; e++) {
      out.data[offset + e] = combine(out.data[offset + e], updates.data[j * sliceSize + e]);
    }
  }
  return [out];
}
""", ("scatterReduction",)),
    "ScatterElements": JsOp("""
function opScatterElements(node, [x, indices, updates]) {
  const combine = scatterReduction(node), axis = normAxis(node.attributes.axis ?? 0, x.shape.length);
  const dim = x.shape[axis], strides = stridesOf(x.shape);
  const out = makeTensor(x.dataType, x.shape, x.data.slice());
  forEachIndex(indices.shape, (index, k) => {
    const raw = indices.data[k], i = raw < 0 ? raw + dim : raw;
    let offset = 0;
    for (let d = 0; d < index.length; d++) offset += (d === axis ? i : index[d]) * strides[d];
    out.data[offset] = combine(out.data[offset], updates.data[k]);
  });
  return [out];
}
""", ("coordinates", "scatterReduction")),
    "OneHot": JsOp("""
function opOneHot(node, [indices, depthTensor, values]) {
  const depth = Math.trunc(scalarOf(depthTensor)), rank = indices.shape.length + 1;
  const axis = normAxis(node.attributes.axis ?? -1, rank);
  const outer = sizeOf(indices.shape.slice(0, axis)), inner = sizeOf(indices.shape.slice(axis));
  const out = makeTensor(values.dataType, [...indices.shape.slice(0, axis), depth, ...indices.shape.slice(axis)]);
  out.data.fill(values.data[0]);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const raw = Math.trunc(indices.data[o * inner + i]), at = raw < 0 ? raw + depth : raw;
      if (at >= 0 && at < depth) out.data[(o * depth + at) * inner + i] = values.data[1];
    }
  }
  return [out];
}
"""),
    "Pad": JsOp("""
function opPad(node, [x, padsTensor, valueTensor, axesTensor]) {
  // pads and the value: inputs from opset 11, attributes before
  const a = node.attributes, mode = a.mode ?? "constant", rank = x.shape.length;
  if (!["constant", "edge", "reflect", "wrap"].includes(mode)) throw new TypeError(`mode ${JSON.stringify(mode)} is not supported`);
  const pads = padsTensor ? intsOf(padsTensor) : a.pads;
  const axes = axesTensor ? intsOf(axesTensor).map((v) => normAxis(v, rank)) : x.shape.map((_, i) => i);
  const before = new Array(rank).fill(0), after = new Array(rank).fill(0);
  axes.forEach((axis, i) => { before[axis] = pads[i]; after[axis] = pads[i + axes.length]; });
  const value = valueTensor ? scalarOf(valueTensor) : a.value ?? 0;
  const shape = x.shape.map((d, i) => d + before[i] + after[i]);
  const strides = stridesOf(x.shape), out = makeTensor(x.dataType, shape);
  forEachIndex(shape, (index, k) => {
    let offset = 0;
    for (let d = 0; d < rank && offset >= 0; d++) {
      const dim = x.shape[d];
      let i = index[d] - before[d];
      if (i < 0 || i >= dim) {
        if (mode === "constant") { offset = -1; break; }
        if (mode === "edge") i = i < 0 ? 0 : dim - 1;
        else if (mode === "wrap") i = ((i % dim) + dim) % dim;
        else {
          const period = 2 * (dim - 1);
          i = period ? ((i % period) + period) % period : 0;
          if (i >= dim) i = period - i;
        }
      }
      offset += i * strides[d];
    }
    out.data[k] = offset < 0 ? value : x.data[offset];
  });
  return [out];
}
""", ("coordinates",)),
}
"""Operator name -> its JavaScript."""
