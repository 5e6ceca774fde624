"""JavaScript of the host steps' arithmetic, comparison, logic, activation and reduction
operators (onnxruntime's semantics; `converter.io.export.host_js` writes the ones a model
uses).

MatMul and Gemm accumulate in float64 (onnxruntime in float32). Restrictions: float32 results are computed in float64 and rounded once to float32 (within
1e-6 relative of onnxruntime, which computes some of them in float32 or with vectorised
approximations); float16 is computed as float32; int64 is exact up to 2^53; integer
Div truncates and a division by zero gives 0 (onnxruntime stops there); Mod with fmod=0 takes
the divisor's sign (Python's %), fmod=1 the dividend's (C's fmod); Round is half to even.
"""

from __future__ import annotations

from converter.io.export.host_js_runtime import JsOp

__all__ = ["MATH_HELPERS", "MATH_OPS"]


def _binary(name: str, body: str) -> JsOp:
    return JsOp(f"""
function op{name}(node, [a, b]) {{
  {body}
}}
""", ("broadcast",))


def _compare(name: str, expression: str) -> JsOp:
    return JsOp(f"""
function op{name}(node, [a, b]) {{
  return [elementwise([a, b], "bool", (x, y) => ({expression} ? 1 : 0))];
}}
""", ("broadcast",))


def _unary(name: str, expression: str) -> JsOp:
    return JsOp(f"""
function op{name}(node, [x]) {{
  return [unary(x, (v) => {expression})];
}}
""", ("unary",))


def _reduce(name: str, init: str, step: str, finish: str = "(acc) => acc") -> JsOp:
    return JsOp(f"""
function op{name}(node, inputs) {{
  const axes = reduceAxes(node, inputs);
  if (axes === null) return [inputs[0]];
  return [reduce(node, inputs[0], axes, {init}, {step}, {finish})];
}}
""", ("broadcast", "reduce"))


MATH_OPS: dict[str, JsOp] = {
    "Add": _binary("Add", "return [elementwise([a, b], a.dataType, (x, y) => x + y)];"),
    "Sub": _binary("Sub", "return [elementwise([a, b], a.dataType, (x, y) => x - y)];"),
    "Mul": _binary("Mul", """const mul = a.dataType === "int32" ? Math.imul
    : a.dataType === "uint32" ? (x, y) => Math.imul(x, y) >>> 0 : (x, y) => x * y;
  return [elementwise([a, b], a.dataType, mul)];"""),
    "Div": _binary("Div", """// integer division truncates toward zero, as onnxruntime's
  const div = isFloat(a.dataType) ? (x, y) => x / y : (x, y) => (y === 0 ? 0 : Math.trunc(x / y));
  return [elementwise([a, b], a.dataType, div)];"""),
    "Mod": _binary("Mod", """// fmod=1: the sign of the dividend (C fmod); fmod=0: the sign of the divisor (integers)
  const python = (x, y) => {
    if (y === 0) return 0;
    const r = x % y;
    return r !== 0 && (r < 0) !== (y < 0) ? r + y : r;
  };
  const mod = node.attributes.fmod || isFloat(a.dataType) ? (x, y) => x % y : python;
  return [elementwise([a, b], a.dataType, mod)];"""),
    "Pow": _binary("Pow", """const pow = isFloat(a.dataType) ? Math.pow : (x, y) => Math.trunc(Math.pow(x, y));
  return [elementwise([a, b], a.dataType, pow)];"""),
    "Equal": _compare("Equal", "x === y"),
    "Greater": _compare("Greater", "x > y"),
    "GreaterOrEqual": _compare("GreaterOrEqual", "x >= y"),
    "Less": _compare("Less", "x < y"),
    "LessOrEqual": _compare("LessOrEqual", "x <= y"),
    "And": _compare("And", "x && y"),
    "Or": _compare("Or", "x || y"),
    "Xor": _compare("Xor", "!x !== !y"),
    "Not": _unary("Not", "(v ? 0 : 1)"),
    "Neg": _unary("Neg", "-v"),
    "Abs": _unary("Abs", "Math.abs(v)"),
    "Exp": _unary("Exp", "Math.exp(v)"),
    "Log": _unary("Log", "Math.log(v)"),
    "Sqrt": _unary("Sqrt", "Math.sqrt(v)"),
    "Sigmoid": _unary("Sigmoid", "1 / (1 + Math.exp(-v))"),
    "Relu": _unary("Relu", "Math.max(v, 0)"),
    "Floor": _unary("Floor", "Math.floor(v)"),
    "Ceil": _unary("Ceil", "Math.ceil(v)"),
    "Round": _unary("Round", "(Math.abs(v % 1) === 0.5 ? 2 * Math.round(v / 2) : Math.round(v))"),
    "Reciprocal": _unary("Reciprocal", "1 / v"),
    "Sign": _unary("Sign", "Math.sign(v)"),
    "Tanh": _unary("Tanh", "Math.tanh(v)"),
    "Sin": _unary("Sin", "Math.sin(v)"),
    "Cos": _unary("Cos", "Math.cos(v)"),
    "Atan": _unary("Atan", "Math.atan(v)"),
    "Softplus": _unary("Softplus", "(v > 20 ? v : Math.log1p(Math.exp(v)))"),
    "IsNaN": JsOp("""
function opIsNaN(node, [x]) {
  return [unary(x, (v) => (Number.isNaN(v) ? 1 : 0), "bool")];
}
""", ("unary",)),
    "IsInf": JsOp("""
function opIsInf(node, [x]) {
  const {detect_negative: negative = 1, detect_positive: positive = 1} = node.attributes;
  return [unary(x, (v) => ((v === Infinity && positive) || (v === -Infinity && negative) ? 1 : 0), "bool")];
}
""", ("unary",)),
    "Erf": JsOp("""
function opErf(node, [x]) {
  return [unary(x, erf)];
}
""", ("unary", "erf")),
    "Gelu": JsOp("""
function opGelu(node, [x]) {
  // approximate "none": x * Phi(x); "tanh": the tanh approximation
  const tanh = node.attributes.approximate === "tanh", c = Math.sqrt(2 / Math.PI);
  return [unary(x, tanh ? (v) => 0.5 * v * (1 + Math.tanh(c * (v + 0.044715 * v ** 3)))
    : (v) => 0.5 * v * (1 + erf(v / Math.SQRT2)))];
}
""", ("unary", "erf")),
    "Elu": JsOp("""
function opElu(node, [x]) {
  const alpha = node.attributes.alpha ?? 1;
  return [unary(x, (v) => (v < 0 ? alpha * Math.expm1(v) : v))];
}
""", ("unary",)),
    "PRelu": _binary("PRelu", "return [elementwise([a, b], a.dataType, (x, slope) => (x < 0 ? slope * x : x))];"),
    "HardSigmoid": JsOp("""
function opHardSigmoid(node, [x]) {
  const alpha = node.attributes.alpha ?? 0.2, beta = node.attributes.beta ?? 0.5;
  return [unary(x, (v) => Math.max(0, Math.min(1, alpha * v + beta)))];
}
""", ("unary",)),
    "HardSwish": _unary("HardSwish", "v * Math.max(0, Math.min(1, v / 6 + 0.5))"),
    "LeakyRelu": JsOp("""
function opLeakyRelu(node, [x]) {
  const alpha = node.attributes.alpha ?? 0.01;
  return [unary(x, (v) => (v < 0 ? alpha * v : v))];
}
""", ("unary",)),
    "MatMul": JsOp("""
function opMatMul(node, [a, b]) {
  // numpy matmul: 1-D operands get a dimension of 1 (removed again), batch dimensions broadcast
  const aShape = a.shape.length === 1 ? [1, a.shape[0]] : a.shape;
  const bShape = b.shape.length === 1 ? [b.shape[0], 1] : b.shape;
  const [m, k] = aShape.slice(-2), [k2, n] = bShape.slice(-2);
  if (k !== k2) throw new RangeError(`cannot multiply [${a.shape}] by [${b.shape}]`);
  const batch = broadcastShape([aShape.slice(0, -2), bShape.slice(0, -2)]);
  const aAt = broadcastOffsets(aShape.slice(0, -2), batch), bAt = broadcastOffsets(bShape.slice(0, -2), batch);
  const shape = [...batch, m, n], out = makeTensor(a.dataType, shape);
  for (let i = 0; i < aAt.length; i++) {
    const rows = a.data.subarray(aAt[i] * m * k, (aAt[i] + 1) * m * k);
    const cols = transposed(b.data.subarray(bAt[i] * k * n, (bAt[i] + 1) * k * n), k, n);
    dotProducts(rows, cols, m, n, k, out.data.subarray(i * m * n, (i + 1) * m * n), 1, null, 0);
  }
  if (a.shape.length === 1) shape.splice(-2, 1);
  if (b.shape.length === 1) shape.splice(-1, 1);
  return [makeTensor(a.dataType, shape, out.data)];
}
""", ("broadcast", "dot")),
    "Gemm": JsOp("""
function opGemm(node, [a, b, c]) {
  // alpha * A' * B' + beta * C (C broadcast to [M, N])
  const {alpha = 1, beta = 1, transA = 0, transB = 0} = node.attributes;
  const [m, k] = transA ? [a.shape[1], a.shape[0]] : a.shape;
  const n = transB ? b.shape[0] : b.shape[1];
  const rows = transA ? transposed(a.data, k, m) : a.data;
  const cols = transB ? b.data : transposed(b.data, k, n);
  const out = makeTensor(a.dataType, [m, n]);
  const bias = c ? {data: c.data, at: broadcastOffsets(c.shape, [m, n])} : null;
  dotProducts(rows, cols, m, n, k, out.data, alpha, bias, beta);
  return [out];
}
""", ("broadcast", "dot")),
    "Identity": JsOp("""
function opIdentity(node, [x]) {
  return [x];
}
"""),
    "Where": JsOp("""
function opWhere(node, [condition, x, y]) {
  return [elementwise([condition, x, y], x.dataType, (c, u, v) => (c ? u : v))];
}
""", ("broadcast",)),
    "Clip": JsOp("""
function opClip(node, [x, min, max]) {
  // bounds: inputs 1 and 2 from opset 11, attributes before
  const lo = min ? scalarOf(min) : node.attributes.min ?? -Infinity;
  const hi = max ? scalarOf(max) : node.attributes.max ?? Infinity;
  return [unary(x, (v) => Math.min(Math.max(v, lo), hi))];
}
""", ("unary",)),
    "Min": JsOp("""
function opMin(node, inputs) {
  return [fold(inputs, (x, y) => (Number.isNaN(x) || x < y ? x : y))];
}
""", ("broadcast",)),
    "Max": JsOp("""
function opMax(node, inputs) {
  return [fold(inputs, (x, y) => (Number.isNaN(x) || x > y ? x : y))];
}
""", ("broadcast",)),
    "Sum": JsOp("""
function opSum(node, inputs) {
  return [fold(inputs, (x, y) => x + y)];
}
""", ("broadcast",)),
    "Mean": JsOp("""
function opMean(node, inputs) {
  const sum = fold(inputs, (x, y) => x + y);
  return [unary(sum, (v) => v / inputs.length)];
}
""", ("broadcast", "unary")),
    "Softmax": JsOp("""
function opSoftmax(node, [x], opset) {
  return [softmax(node, x, opset, false)];
}
""", ("softmax",)),
    "LogSoftmax": JsOp("""
function opLogSoftmax(node, [x], opset) {
  return [softmax(node, x, opset, true)];
}
""", ("softmax",)),
    "ReduceMax": _reduce("ReduceMax", "-Infinity", "(acc, v) => (acc > v || Number.isNaN(acc) ? acc : v)"),
    "ReduceMin": _reduce("ReduceMin", "Infinity", "(acc, v) => (acc < v || Number.isNaN(acc) ? acc : v)"),
    "ReduceSum": _reduce("ReduceSum", "0", "(acc, v) => acc + v"),
    "ReduceMean": _reduce("ReduceMean", "0", "(acc, v) => acc + v",
                          "(acc, count) => acc / count"),
    "ReduceProd": _reduce("ReduceProd", "1", "(acc, v) => acc * v"),
    "ReduceL1": _reduce("ReduceL1", "0", "(acc, v) => acc + Math.abs(v)"),
    "ReduceL2": _reduce("ReduceL2", "0", "(acc, v) => acc + v * v", "(acc) => Math.sqrt(acc)"),
    "ReduceSumSquare": _reduce("ReduceSumSquare", "0", "(acc, v) => acc + v * v"),
    "ReduceLogSum": _reduce("ReduceLogSum", "0", "(acc, v) => acc + v", "(acc) => Math.log(acc)"),
    "ReduceLogSumExp": _reduce(
        "ReduceLogSumExp", "-Infinity",  # a running log-sum-exp: no overflow
        "(acc, v) => (acc === -Infinity ? v : Math.max(acc, v) + Math.log1p(Math.exp(-Math.abs(acc - v))))"),
    "ArgMax": JsOp("""
function opArgMax(node, [x]) {
  return [argExtreme(node, x, (v, best) => v > best)];
}
""", ("broadcast", "reduce", "argExtreme")),
    "ArgMin": JsOp("""
function opArgMin(node, [x]) {
  return [argExtreme(node, x, (v, best) => v < best)];
}
""", ("broadcast", "reduce", "argExtreme")),
    "CumSum": JsOp("""
function opCumSum(node, [x, axisTensor]) {
  const axis = normAxis(scalarOf(axisTensor), x.shape.length);
  const {exclusive = 0, reverse = 0} = node.attributes;
  const outer = sizeOf(x.shape.slice(0, axis)), dim = x.shape[axis], inner = sizeOf(x.shape.slice(axis + 1));
  const out = makeTensor(x.dataType, x.shape);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let sum = 0;
      for (let s = 0; s < dim; s++) {
        const at = (o * dim + (reverse ? dim - 1 - s : s)) * inner + i;
        if (exclusive) { out.data[at] = sum; sum += x.data[at]; } else { sum += x.data[at]; out.data[at] = sum; }
        sum = out.dataType === "float32" ? Math.fround(sum) : sum;
      }
    }
  }
  return [out];
}
"""),
}
"""Operator name -> its JavaScript."""

ARG_EXTREME = r"""
/** ArgMax/ArgMin: the first (or, with select_last_index, the last) index of the extreme. */
function argExtreme(node, x, better) {
  const axis = normAxis(node.attributes.axis ?? 0, x.shape.length);
  const last = node.attributes.select_last_index ?? 0;
  const outer = sizeOf(x.shape.slice(0, axis)), dim = x.shape[axis], inner = sizeOf(x.shape.slice(axis + 1));
  const keepShape = x.shape.map((d, i) => (i === axis ? 1 : d));
  const out = makeTensor("int64", node.attributes.keepdims ?? 1 ? keepShape : x.shape.filter((_, i) => i !== axis));
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let best = x.data[o * dim * inner + i], at = 0;
      for (let j = 1; j < dim; j++) {
        const v = x.data[(o * dim + j) * inner + i];
        if (better(v, best) || (last && v === best)) { best = v; at = j; }
      }
      out.data[o * inner + i] = at;
    }
  }
  return out;
}
"""
"""The `argExtreme` helper of ArgMax and ArgMin."""

SOFTMAX = r"""
/** Softmax (or its log) of x: opset 13+ along `axis` (default -1); before, over the
 * flattened dimensions from `axis` (default 1). */
function softmax(node, x, opset, log) {
  const rank = x.shape.length;
  const axis = normAxis(node.attributes.axis ?? (opset >= 13 ? -1 : 1), rank);
  const outer = sizeOf(x.shape.slice(0, axis));
  const length = opset >= 13 ? x.shape[axis] : sizeOf(x.shape.slice(axis));
  const inner = opset >= 13 ? sizeOf(x.shape.slice(axis + 1)) : 1;
  const out = makeTensor(x.dataType, x.shape), e = new Float64Array(length);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (j) => (o * length + j) * inner + i;
      let max = -Infinity, sum = 0;
      for (let j = 0; j < length; j++) max = Math.max(max, x.data[at(j)]);
      for (let j = 0; j < length; j++) { e[j] = Math.exp(x.data[at(j)] - max); sum += e[j]; }
      const logSum = Math.log(sum);
      for (let j = 0; j < length; j++) out.data[at(j)] = log ? x.data[at(j)] - max - logSum : e[j] / sum;
    }
  }
  return out;
}
"""

ERF = r"""
/** The error function to double precision: its Taylor series below |x| = 4, +-1 beyond
 * (erfc(4) < 2e-8). */
function erf(x) {
  if (Number.isNaN(x)) return x;
  if (Math.abs(x) >= 4) return Math.sign(x);
  let term = x, sum = x;
  for (let n = 1; n < 100 && Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
    term *= (-x * x) / n;
    sum += term / (2 * n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}
"""

DOT = r"""
/** A rows x cols matrix (row-major) transposed. */
function transposed(data, rows, cols) {
  const out = new data.constructor(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}

/** out[r, c] = alpha * dot(rows[r, :], cols[c, :]) (+ beta * bias) for m rows and n cols
 * of length k, accumulated in float64 (in blocks of k that stay in cache, four rows by two
 * columns at a time). */
function dotProducts(rows, cols, m, n, k, out, alpha, bias, beta) {
  const acc = new Float64Array(m * n), block = 256, m4 = m - (m % 4), n2 = n - (n % 2);
  const single = (r, c, j0, j1) => {
    let sum = 0;
    for (let j = j0, ro = r * k, co = c * k; j < j1; j++) sum += rows[ro + j] * cols[co + j];
    acc[r * n + c] += sum;
  };
  for (let j0 = 0; j0 < k; j0 += block) {
    const j1 = Math.min(j0 + block, k);
    for (let c = 0; c < n2; c += 2) {
      const p0 = c * k, p1 = p0 + k;
      for (let r = 0; r < m4; r += 4) {
        const o0 = r * k, o1 = o0 + k, o2 = o1 + k, o3 = o2 + k;
        let a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
        for (let j = j0; j < j1; j++) {
          const v = cols[p0 + j], w = cols[p1 + j];
          const x0 = rows[o0 + j], x1 = rows[o1 + j], x2 = rows[o2 + j], x3 = rows[o3 + j];
          a0 += x0 * v; a1 += x1 * v; a2 += x2 * v; a3 += x3 * v;
          b0 += x0 * w; b1 += x1 * w; b2 += x2 * w; b3 += x3 * w;
        }
        const at = r * n + c;
        acc[at] += a0; acc[at + n] += a1; acc[at + 2 * n] += a2; acc[at + 3 * n] += a3;
        acc[at + 1] += b0; acc[at + n + 1] += b1; acc[at + 2 * n + 1] += b2; acc[at + 3 * n + 1] += b3;
      }
      for (let r = m4; r < m; r++) { single(r, c, j0, j1); single(r, c + 1, j0, j1); }
    }
    for (let c = n2; c < n; c++) for (let r = 0; r < m; r++) single(r, c, j0, j1);
  }
  for (let i = 0; i < m * n; i++) out[i] = alpha * acc[i] + (bias ? beta * bias.data[bias.at[i]] : 0);
}
"""

MATH_HELPERS = {"argExtreme": ARG_EXTREME, "softmax": SOFTMAX, "erf": ERF, "dot": DOT}
"""Helpers of these operators, by name."""
