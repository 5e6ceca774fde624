"""JavaScript of the host steps' data-dependent operators: NonZero, NonMaxSuppression, TopK,
Unique, Compress, Resize, RoiAlign (onnxruntime's semantics and output order; written by
`converter.io.export.host_js` where a model uses them).

Restrictions: NonZero of a scalar gives [1, n] zeros as onnxruntime; NonMaxSuppression computes the boxes'
overlap in float32 as onnxruntime does (a score must be strictly greater than
score_threshold, an IoU strictly greater than iou_threshold suppresses, ties in score keep the
lower box index first, the result is ordered by batch, then class, then selection); TopK
always sorts (largest: descending, else ascending; ties: the lower index first), also with
sorted=0, where onnxruntime's order is unspecified; Unique sorts numbers (sorted=1) or keeps
the first-occurrence order (sorted=0), slices along `axis` lexicographically; Resize takes
the nearest and linear modes with the half_pixel, pytorch_half_pixel, align_corners
and asymmetric coordinate transforms (not cubic, antialias,
tf_crop_and_resize or a keep_aspect_ratio_policy other than stretch), computing each axis in
turn in float64; RoiAlign takes both coordinate transforms and the avg and max modes
(max as onnxruntime: the largest weighted corner value of any sampling point), computed in
float64.
"""

from __future__ import annotations

from converter.io.export.host_js_runtime import JsOp

__all__ = ["SELECT_OPS"]

SELECT_OPS: dict[str, JsOp] = {
    "NonZero": JsOp("""
function opNonZero(node, [x]) {
  const rank = x.shape.length, strides = stridesOf(x.shape);
  let count = 0;
  for (let k = 0; k < x.data.length; k++) if (x.data[k]) count++;
  const out = makeTensor("int64", [Math.max(rank, 1), count]);  // a scalar: [1, count] of 0
  for (let k = 0, j = 0; k < x.data.length; k++) {
    if (!x.data[k]) continue;
    for (let d = 0, rest = k; d < rank; d++) {
      out.data[d * count + j] = Math.floor(rest / strides[d]);
      rest %= strides[d];
    }
    j++;
  }
  return [out];
}
"""),
    "Compress": JsOp("""
function opCompress(node, [x, condition]) {
  const keep = (n) => Array.from({length: Math.min(n, condition.data.length)}, (_, i) => i).filter((i) => condition.data[i]);
  if (node.attributes.axis === undefined) {
    const flat = makeTensor(x.dataType, [x.data.length], x.data);
    return [gatherAxis(flat, keep(x.data.length), 0)];
  }
  const axis = normAxis(node.attributes.axis, x.shape.length);
  return [gatherAxis(x, keep(x.shape[axis]), axis)];
}
""", ("gatherAxis",)),
    "TopK": JsOp("""
/** Indices 0..order.length-1 sorted by `compare`. */
function sortedOrder(order, compare) {
  for (let j = 0; j < order.length; j++) order[j] = j;
  return order.sort(compare);
}

/** The first k of indices 0..n-1 in `compare` order, for k much smaller than n (insertion
 * into a sorted list of k). */
function bestOf(n, k, compare) {
  const top = [];
  for (let j = 0; j < n && k > 0; j++) {
    if (top.length === k && compare(j, top[k - 1]) >= 0) continue;
    let lo = 0, hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(top[mid], j) < 0) lo = mid + 1; else hi = mid;
    }
    top.splice(lo, 0, j);
    if (top.length > k) top.pop();
  }
  return top;
}

function opTopK(node, [x, kTensor]) {
  // k: input 1 from opset 10, attribute before; ties keep the lower index first
  const axis = normAxis(node.attributes.axis ?? -1, x.shape.length);
  const largest = node.attributes.largest ?? 1;
  const k = kTensor ? scalarOf(kTensor) : node.attributes.k, dim = x.shape[axis];
  if (!(k >= 0 && k <= dim)) throw new RangeError(`k = ${k} for a dimension of ${dim}`);
  const outer = sizeOf(x.shape.slice(0, axis)), inner = sizeOf(x.shape.slice(axis + 1));
  const shape = x.shape.map((d, i) => (i === axis ? k : d));
  const values = makeTensor(x.dataType, shape), indices = makeTensor("int64", shape);
  const row = new Float64Array(dim), order = new Array(dim);
  // best first; equal values: the lower index first (NaN-safe: a difference of NaN is a tie)
  const compare = largest ? (p, q) => row[q] - row[p] || p - q : (p, q) => row[p] - row[q] || p - q;
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      for (let j = 0; j < dim; j++) row[j] = x.data[(o * dim + j) * inner + i];
      const top = k * 8 < dim ? bestOf(dim, k, compare) : sortedOrder(order, compare);
      for (let j = 0; j < k; j++) {
        const to = (o * k + j) * inner + i;
        values.data[to] = row[top[j]];
        indices.data[to] = top[j];
      }
    }
  }
  return [values, indices];
}
"""),
    "NonMaxSuppression": JsOp("""
/** The boxes of one batch as float32 corners [y0, x0, y1, x1] (from corners in any order,
 * or from [x_center, y_center, width, height] with centerPointBox). */
function nmsCorners(data, centerPointBox) {
  const f = Math.fround, out = new Float32Array(data.length);
  for (let at = 0; at < data.length; at += 4) {
    const [a, b, c, d] = [data[at], data[at + 1], data[at + 2], data[at + 3]];
    if (centerPointBox) {
      const halfW = f(c / 2), halfH = f(d / 2);
      out.set([f(b - halfH), f(a - halfW), f(b + halfH), f(a + halfW)], at);
    } else {
      out.set([Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)], at);
    }
  }
  return out;
}

/** Whether boxes i and j overlap by more than `threshold` (IoU in float32, as onnxruntime;
 * `corners` from nmsCorners, `areas` their float32 areas). */
function suppressedByIoU(corners, areas, i, j, threshold) {
  const f = Math.fround, c = corners, a = i * 4, b = j * 4;
  const ix0 = Math.max(c[a + 1], c[b + 1]), ix1 = Math.min(c[a + 3], c[b + 3]);
  if (ix1 <= ix0) return false;
  const iy0 = Math.max(c[a], c[b]), iy1 = Math.min(c[a + 2], c[b + 2]);
  if (iy1 <= iy0) return false;
  const intersection = f(f(ix1 - ix0) * f(iy1 - iy0));
  if (intersection <= 0) return false;
  const union = f(f(areas[i] + areas[j]) - intersection);
  if (areas[i] <= 0 || areas[j] <= 0 || union <= 0) return false;
  return f(intersection / union) > threshold;
}

/**
 * Greedy NMS of `candidates` (best first): each is kept unless a kept box suppresses it, up
 * to `limit`; the kept indices in selection order. Kept boxes are also held sorted by their
 * left edge so that a candidate is tested only against those whose x-range can meet its own
 * (a box without x-overlap has IoU 0 and suppresses nothing: the same result as testing all).
 */
function greedySelection(candidates, limit, corners, areas, threshold) {
  const kept = [], lefts = [], byLeft = [], odd = [];
  let widest = 0;
  const suppresses = (j, i) => suppressedByIoU(corners, areas, j, i, threshold);
  for (let k = 0; k < candidates.length && kept.length < limit; k++) {
    const i = candidates[k], x0 = corners[i * 4 + 1], x1 = corners[i * 4 + 3];
    let keep = !odd.some((j) => suppresses(j, i));
    if (keep && Number.isFinite(x0) && Number.isFinite(x1)) {
      const bound = x0 - widest * (1 + 1e-6);
      let lo = 0, hi = lefts.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (lefts[mid] < bound) lo = mid + 1; else hi = mid; }
      for (let t = lo; keep && t < lefts.length && lefts[t] <= x1; t++) keep = !suppresses(byLeft[t], i);
    } else if (keep) {
      keep = !kept.some((j) => suppresses(j, i));
    }
    if (!keep) continue;
    kept.push(i);
    if (Number.isFinite(x0) && Number.isFinite(x1)) {
      let at = 0, end = lefts.length;
      while (at < end) { const mid = (at + end) >> 1; if (lefts[mid] <= x0) at = mid + 1; else end = mid; }
      lefts.splice(at, 0, x0);
      byLeft.splice(at, 0, i);
      widest = Math.max(widest, x1 - x0);
    } else {
      odd.push(i);
    }
  }
  return kept;
}

function opNonMaxSuppression(node, [boxes, scores, maxTensor, iouTensor, scoreTensor]) {
  const centerPointBox = node.attributes.center_point_box ?? 0;
  const maxPerClass = maxTensor ? Math.max(scalarOf(maxTensor), 0) : 0;
  const iouThreshold = iouTensor ? scalarOf(iouTensor) : 0;
  const scoreThreshold = scoreTensor ? scalarOf(scoreTensor) : -Infinity;
  const [batches, classes, count] = scores.shape;
  const selected = [], areas = new Float32Array(count), f = Math.fround;
  for (let n = 0; n < batches; n++) {
    const corners = nmsCorners(boxes.data.subarray(n * count * 4, (n + 1) * count * 4), centerPointBox);
    for (let i = 0; i < count; i++) {
      const c = corners.subarray(i * 4, i * 4 + 4);
      areas[i] = f(f(c[3] - c[1]) * f(c[2] - c[0]));
    }
    for (let c = 0; c < classes; c++) {
      const score = scores.data.subarray((n * classes + c) * count, (n * classes + c + 1) * count);
      // candidates: score strictly above the threshold, best first, ties by lower index
      const candidates = [];
      for (let i = 0; i < count; i++) if (!scoreTensor || score[i] > scoreThreshold) candidates.push(i);
      candidates.sort((p, q) => score[q] - score[p] || p - q);
      const kept = greedySelection(candidates, maxPerClass, corners, areas, iouThreshold);
      for (const i of kept) selected.push(n, c, i);
    }
  }
  return [makeTensor("int64", [selected.length / 3, 3], Float64Array.from(selected))];
}
"""),
    "Unique": JsOp("""
function opUnique(node, [x]) {
  const sorted = node.attributes.sorted ?? 1, flat = node.attributes.axis === undefined;
  const source = flat ? makeTensor(x.dataType, [x.data.length], x.data) : x;
  const axis = flat ? 0 : normAxis(node.attributes.axis, x.shape.length), dim = source.shape[axis];
  // the items are the elements (no axis) or the slices along `axis`
  const items = Array.from({length: dim}, (_, i) => Array.from(gatherAxis(source, [i], axis).data));
  const first = new Map(), inverse = new Array(dim), counts = [];
  const order = [];
  items.forEach((item, i) => {
    const key = item.join(",");
    if (!first.has(key)) { first.set(key, order.length); order.push(i); counts.push(0); }
    counts[first.get(key)]++;
  });
  let rank = order.map((_, u) => u);
  if (sorted) {
    const compare = (p, q) => {
      const a = items[order[p]], b = items[order[q]];
      for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return a[j] < b[j] ? -1 : 1;
      return 0;
    };
    rank.sort(compare);
  }
  const position = new Array(rank.length);
  rank.forEach((u, at) => { position[u] = at; });
  items.forEach((item, i) => { inverse[i] = position[first.get(item.join(","))]; });
  const firstIndex = rank.map((u) => order[u]);
  const int64 = (values) => makeTensor("int64", [values.length], Float64Array.from(values));
  return [gatherAxis(source, firstIndex, axis), int64(firstIndex), int64(inverse), int64(rank.map((u) => counts[u]))];
}
""", ("gatherAxis",)),
    "Resize": JsOp("""
/** The input coordinate of output coordinate `x` along one axis (ONNX Resize). */
function resizeSource(mode, x, scale, inLength, outLength) {
  // in float32, as onnxruntime computes it
  const f = Math.fround;
  switch (mode) {
    case "half_pixel": return f(f(f(x + 0.5) / scale) - 0.5);
    case "pytorch_half_pixel": return outLength > 1 ? f(f(f(x + 0.5) / scale) - 0.5) : 0;
    case "align_corners": return outLength === 1 ? 0 : f(f(x * (inLength - 1)) / (outLength - 1));
    case "asymmetric": return f(x / scale);
    default: throw new TypeError(`coordinate_transformation_mode ${JSON.stringify(mode)} is not supported`);
  }
}

/** `x` resampled along `axis` to `outLength`: weights(j) gives [[input index, weight], ...]. */
function resampleAxis(x, axis, outLength, weights) {
  const dim = x.shape[axis], outer = sizeOf(x.shape.slice(0, axis)), inner = sizeOf(x.shape.slice(axis + 1));
  const out = makeTensor("float64", x.shape.map((d, i) => (i === axis ? outLength : d)));
  for (let j = 0; j < outLength; j++) {
    const taps = weights(j);
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < inner; i++) {
        let sum = 0;
        for (const [at, w] of taps) sum += w * x.data[(o * dim + at) * inner + i];
        out.data[(o * outLength + j) * inner + i] = sum;
      }
    }
  }
  return out;
}

function opResize(node, inputs, opset) {
  // inputs: X, scales (opset 10); X, roi, scales, sizes (opset 11+)
  const [x, , scalesTensor, sizesTensor] = opset >= 11 ? inputs : [inputs[0], null, inputs[1], null];
  const a = node.attributes, rank = x.shape.length;
  const mode = a.mode ?? "nearest", transform = a.coordinate_transformation_mode ?? (opset >= 11 ? "half_pixel" : "asymmetric");
  const nearestMode = a.nearest_mode ?? "round_prefer_floor";
  if (mode !== "nearest" && mode !== "linear") throw new TypeError(`mode ${JSON.stringify(mode)} is not supported`);
  if (a.antialias || (a.keep_aspect_ratio_policy ?? "stretch") !== "stretch") throw new TypeError("antialias and keep_aspect_ratio_policy are not supported");
  const axes = (a.axes ?? x.shape.map((_, i) => i)).map((v) => normAxis(v, rank));
  const scales = x.shape.map(() => 1), sizes = [...x.shape];
  const given = sizesTensor && sizesTensor.data.length ? intsOf(sizesTensor) : null;
  axes.forEach((axis, i) => {
    if (given) { sizes[axis] = given[i]; scales[axis] = Math.fround(given[i] / x.shape[axis]); }
    else { scales[axis] = scalesTensor.data[i]; sizes[axis] = Math.floor(x.shape[axis] * scales[axis]); }
  });
  const round = {
    round_prefer_floor: (v) => (v === Math.floor(v) + 0.5 ? Math.floor(v) : Math.round(v)),
    round_prefer_ceil: (v) => Math.round(v), floor: Math.floor, ceil: Math.ceil,
  }[nearestMode];
  if (!round) throw new TypeError(`nearest_mode ${JSON.stringify(nearestMode)} is not supported`);
  let current = makeTensor("float64", x.shape, Float64Array.from(x.data));
  for (let axis = 0; axis < rank; axis++) {
    const inLength = x.shape[axis], outLength = sizes[axis], scale = scales[axis];
    if (inLength === outLength && scale === 1) continue;
    const clampIndex = (v) => Math.min(Math.max(v, 0), inLength - 1);
    current = resampleAxis(current, axis, outLength, (j) => {
      const source = resizeSource(transform, j, scale, inLength, outLength);
      if (mode === "nearest") return [[clampIndex(round(source)), 1]];
      const at = Math.min(Math.max(source, 0), inLength - 1), low = Math.floor(at), high = Math.min(low + 1, inLength - 1);
      return low === high ? [[low, 1]] : [[low, high - at], [high, at - low]];
    });
  }
  const out = makeTensor(x.dataType, sizes);
  out.data.set(current.data);
  return [out];
}
"""),
    "RoiAlign": JsOp("""
function opRoiAlign(node, [x, rois, batchIndices]) {
  // as onnxruntime: sampling points on a regular grid per bin, bilinear, avg or max; the
  // points' corner offsets and weights are computed once per box, then used for every channel
  const a = node.attributes, mode = a.mode ?? "avg", scale = a.spatial_scale ?? 1;
  const halfPixel = (a.coordinate_transformation_mode ?? "half_pixel") === "half_pixel";
  const outH = a.output_height ?? 1, outW = a.output_width ?? 1, ratio = a.sampling_ratio ?? 0;
  const [, channels, height, width] = x.shape, count = rois.shape[0];
  const out = makeTensor(x.dataType, [count, channels, outH, outW]);
  for (let r = 0; r < count; r++) {
    const offset = halfPixel ? 0.5 : 0, box = rois.data.subarray(r * 4, r * 4 + 4);
    const x0 = box[0] * scale - offset, y0 = box[1] * scale - offset;
    let roiW = box[2] * scale - offset - x0, roiH = box[3] * scale - offset - y0;
    if (!halfPixel) { roiW = Math.max(roiW, 1); roiH = Math.max(roiH, 1); }
    const binH = roiH / outH, binW = roiW / outW;
    const gridH = ratio > 0 ? ratio : Math.ceil(roiH / outH), gridW = ratio > 0 ? ratio : Math.ceil(roiW / outW);
    const samples = gridH * gridW, total = outH * outW * samples;
    const at = new Int32Array(total * 4), weight = new Float64Array(total * 4);
    for (let ph = 0, s = 0; ph < outH; ph++) {
      for (let pw = 0; pw < outW; pw++) {
        for (let iy = 0; iy < gridH; iy++) {
          for (let ix = 0; ix < gridW; ix++, s++) {
            let y = y0 + ph * binH + ((iy + 0.5) * binH) / gridH, xx = x0 + pw * binW + ((ix + 0.5) * binW) / gridW;
            if (y < -1 || y > height || xx < -1 || xx > width) continue;  // weights 0
            y = Math.max(y, 0); xx = Math.max(xx, 0);
            let yLow = Math.floor(y), xLow = Math.floor(xx), yHigh = yLow + 1, xHigh = xLow + 1;
            if (yLow >= height - 1) { yLow = yHigh = height - 1; y = yLow; }
            if (xLow >= width - 1) { xLow = xHigh = width - 1; xx = xLow; }
            const ly = y - yLow, lx = xx - xLow, hy = 1 - ly, hx = 1 - lx;
            at.set([yLow * width + xLow, yLow * width + xHigh, yHigh * width + xLow, yHigh * width + xHigh], s * 4);
            weight.set([hy * hx, hy * lx, ly * hx, ly * lx], s * 4);
          }
        }
      }
    }
    const base = Number(batchIndices.data[r]) * channels * height * width;
    for (let c = 0; c < channels; c++) {
      const plane = base + c * height * width;
      for (let bin = 0; bin < outH * outW; bin++) {
        let acc = mode === "max" ? -Infinity : 0;
        for (let s = bin * samples; s < (bin + 1) * samples; s++) {
          const t = s * 4;
          const v0 = weight[t] * x.data[plane + at[t]], v1 = weight[t + 1] * x.data[plane + at[t + 1]];
          const v2 = weight[t + 2] * x.data[plane + at[t + 2]], v3 = weight[t + 3] * x.data[plane + at[t + 3]];
          acc = mode === "max" ? Math.max(acc, v0, v1, v2, v3) : acc + v0 + v1 + v2 + v3;
        }
        out.data[(r * channels + c) * outH * outW + bin] =
          mode === "max" ? (samples ? acc : 0) : acc / Math.max(samples, 1);
      }
    }
  }
  return [out];
}
"""),
}
"""Operator name -> its JavaScript."""
