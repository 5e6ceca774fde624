"""The JavaScript text shared by the host-step operators (`converter.io.export.host_js`):
the tensor representation, the conversions at the boundary and the helpers several operators
use. Plain JavaScript, no dependency; every block is a named helper so a module holds only
the ones its operators need (`HELPERS`, in the order they are written).

Tensors are `{dataType, shape, data}`: `dataType` an ONNX/WebNN lower-case name, `shape` an
array of numbers, `data` a typed array in row-major order. Inside the steps int64/uint64
values are Numbers in a Float64Array (exact up to 2^53), float16 values float32 numbers in a
Float32Array, bool a Uint8Array of 0/1; `hostInput` converts what callers give (Int32Array or
BigInt64Array for int64, Uint16Array bits or Float16Array for float16) and `hostOutput` gives
int64 as BigInt64Array, uint64 as BigUint64Array, float16 as Float16Array where the platform
has it (else Uint16Array bits), every other type in its own typed array.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CORE", "HELPERS", "JsOp"]


@dataclass(frozen=True)
class JsOp:
    """One operator's JavaScript: `function op<Name>(node, inputs, opset, env)` returning the
    array of its output tensors (`inputs[i]` null for an omitted optional input; `env` the
    values defined so far, which If's branches read), and the HELPERS it calls."""

    code: str
    needs: tuple[str, ...] = ()

CORE = r"""
// ---- Host steps: ONNX operators on {dataType, shape, data} tensors (plain JavaScript) ----
// int64/uint64 are Numbers in a Float64Array inside the steps (exact up to 2^53), float16 is
// computed as float32, bool is a Uint8Array of 0/1.
const HOST_ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Float32Array, int8: Int8Array,
  uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, int32: Int32Array,
  uint32: Uint32Array, int64: Float64Array, uint64: Float64Array, bool: Uint8Array,
};
const sizeOf = (shape) => shape.reduce((a, b) => a * b, 1);
const isFloat = (dataType) => dataType === "float32" || dataType === "float64" || dataType === "float16";
const makeTensor = (dataType, shape, data) => ({dataType, shape, data: data ?? new HOST_ARRAYS[dataType](sizeOf(shape))});
const intsOf = (t) => Array.from(t.data, Number);
const scalarOf = (t) => Number(t.data[0]);

function stridesOf(shape) {
  const strides = new Array(shape.length);
  let n = 1;
  for (let i = shape.length - 1; i >= 0; i--) { strides[i] = n; n *= shape[i]; }
  return strides;
}

function normAxis(axis, rank) {
  const a = axis < 0 ? axis + rank : axis;
  if (!(a >= 0 && a < rank)) throw new RangeError(`axis ${axis} is out of range for rank ${rank}`);
  return a;
}

function halfToFloat(bits) {
  const sign = bits & 0x8000 ? -1 : 1, exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

function floatToHalf(value) {
  const x = new Uint32Array(new Float32Array([value]).buffer)[0];
  const sign = (x >>> 16) & 0x8000, exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e, rest = mant & ((1 << shift) - 1), mid = 1 << (shift - 1);
    let half = mant >>> shift;
    if (rest > mid || (rest === mid && (half & 1))) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;
  return sign | half;
}

/** The bytes of base64 text. */
function fromBase64(text) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const table = new Uint8Array(128);
  for (let i = 0; i < 64; i++) table[alphabet.charCodeAt(i)] = i;
  if (text.length % 4) throw new RangeError("base64 text of a length that is not a multiple of 4");
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  for (let i = 0, o = 0; i < text.length; i += 4) {
    const n = (table[text.charCodeAt(i) & 127] << 18) | (table[text.charCodeAt(i + 1) & 127] << 12) |
      (table[text.charCodeAt(i + 2) & 127] << 6) | table[text.charCodeAt(i + 3) & 127];
    if (o < out.length) out[o++] = n >> 16;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}

/** A tensor from the little-endian bytes of a base64 string (the steps' constants). */
function hostConstant(dataType, shape, base64) {
  const bytes = fromBase64(base64);
  const Stored = {int64: BigInt64Array, uint64: BigUint64Array, float16: Uint16Array}[dataType] ?? HOST_ARRAYS[dataType];
  if (bytes.byteLength !== sizeOf(shape) * Stored.BYTES_PER_ELEMENT) {
    throw new RangeError(`a ${dataType} constant of shape [${shape}] with ${bytes.byteLength} bytes`);
  }
  const view = new Stored(bytes.buffer, 0, sizeOf(shape));
  if (dataType === "int64" || dataType === "uint64") return makeTensor(dataType, shape, Float64Array.from(view, Number));
  if (dataType === "float16") return makeTensor(dataType, shape, Float32Array.from(view, halfToFloat));
  return makeTensor(dataType, shape, view);
}

/** A caller's {dataType, shape, data} as the steps hold it (int64 from Int32Array or BigInt64Array). */
function hostInput(name, value) {
  const where = `host input ${JSON.stringify(name)}`;
  if (!value || !HOST_ARRAYS[value.dataType] || !Array.isArray(value.shape) || !ArrayBuffer.isView(value.data)) {
    throw new TypeError(`${where}: expected {dataType, shape, data: typed array}`);
  }
  const {dataType, shape, data} = value;
  if (data.length !== sizeOf(shape)) {
    throw new RangeError(`${where}: ${data.length} values for shape [${shape}]`);
  }
  if (dataType === "float16" && data instanceof Uint16Array) {
    return makeTensor(dataType, shape, Float32Array.from(data, halfToFloat));
  }
  const Type = HOST_ARRAYS[dataType];
  if (data instanceof Type) return makeTensor(dataType, shape, data);
  return makeTensor(dataType, shape, Type.from(data, (v) => Number(v)));
}

/** A step's tensor as callers get it (int64: BigInt64Array, bool: Uint8Array), never shared
 * with the steps' constants or inputs. */
function hostOutput(t) {
  const {dataType, shape} = t;
  if (dataType === "int64") return {dataType, shape, data: BigInt64Array.from(t.data, (v) => BigInt(v))};
  if (dataType === "uint64") return {dataType, shape, data: BigUint64Array.from(t.data, (v) => BigInt(v))};
  if (dataType === "float16") {
    const data = globalThis.Float16Array ? globalThis.Float16Array.from(t.data) : Uint16Array.from(t.data, floatToHalf);
    return {dataType, shape, data};
  }
  return {dataType, shape, data: t.data.slice()};  // a copy: the data may be a constant's
}
"""
"""Always written: the typed array of each data type, shape helpers, float16 bits, and the
boundary conversions (`hostConstant`, `hostInput`, `hostOutput`)."""

HELPERS: dict[str, str] = {
    "broadcast": r"""
/** The numpy/ONNX broadcast of `shapes`. */
function broadcastShape(shapes) {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array(rank).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const j = i + rank - s.length;
      if (s[i] === 1) continue;
      if (out[j] !== 1 && out[j] !== s[i]) {
        throw new RangeError(`shapes ${shapes.map((x) => `[${x}]`).join(", ")} do not broadcast`);
      }
      out[j] = s[i];
    }
  }
  return out;
}

/** For each element of `outShape` (row-major), the flat offset of the element of a tensor of
 * `shape` that broadcasts to it. */
function broadcastOffsets(shape, outShape) {
  const rank = outShape.length, pad = rank - shape.length;
  const strides = new Array(rank).fill(0);
  for (let i = shape.length - 1, s = 1; i >= 0; i--) {
    strides[i + pad] = shape[i] === 1 ? 0 : s;
    s *= shape[i];
  }
  const n = sizeOf(outShape), out = new Int32Array(n), index = new Array(rank).fill(0);
  let offset = 0;
  for (let k = 0; k < n; k++) {
    out[k] = offset;
    for (let d = rank - 1; d >= 0; d--) {
      index[d]++;
      offset += strides[d];
      if (index[d] < outShape[d]) break;
      offset -= strides[d] * index[d];
      index[d] = 0;
    }
  }
  return out;
}

/** fn applied element by element to the broadcast inputs (one to three tensors). */
function elementwise(inputs, dataType, fn) {
  const shape = broadcastShape(inputs.map((t) => t.shape));
  const out = makeTensor(dataType, shape), n = out.data.length;
  const [a, b, c] = inputs.map((t) => t.data);
  const [ia, ib, ic] = inputs.map((t) => broadcastOffsets(t.shape, shape));
  if (inputs.length === 1) for (let k = 0; k < n; k++) out.data[k] = fn(a[ia[k]]);
  else if (inputs.length === 2) for (let k = 0; k < n; k++) out.data[k] = fn(a[ia[k]], b[ib[k]]);
  else for (let k = 0; k < n; k++) out.data[k] = fn(a[ia[k]], b[ib[k]], c[ic[k]]);
  return out;
}

/** fn folded over the broadcast inputs, left to right (Min, Max, Sum, Mean). */
const fold = (inputs, fn) => inputs.slice(1).reduce((acc, t) => elementwise([acc, t], acc.dataType, fn), inputs[0]);
""",
    "unary": r"""
/** fn applied to every element of `x`; the result has dataType (x's by default). */
function unary(x, fn, dataType = x.dataType) {
  const out = makeTensor(dataType, x.shape);
  for (let k = 0; k < x.data.length; k++) out.data[k] = fn(x.data[k]);
  return out;
}
""",
    "reduce": r"""
/** The axes a Reduce* node reduces (input 1 from opset 13/18, else the attribute); null
 * where noop_with_empty_axes makes it the identity. */
function reduceAxes(node, [x, axesTensor]) {
  const axes = axesTensor ? intsOf(axesTensor) : node.attributes.axes ?? [];
  if (axes.length === 0) {
    return node.attributes.noop_with_empty_axes ? null : x.shape.map((_, i) => i);
  }
  return axes.map((a) => normAxis(a, x.shape.length));
}

/** Reduce `x` over `axes` (keepdims as the attribute says): acc starts at init and takes
 * step(acc, value) for each element, then finish(acc, count). */
function reduce(node, x, axes, init, step, finish = (acc) => acc, dataType = x.dataType) {
  const keepShape = x.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const keep = node.attributes.keepdims ?? 1;
  const out = makeTensor(dataType, keep ? keepShape : x.shape.filter((_, i) => !axes.includes(i)));
  const acc = new Float64Array(out.data.length).fill(init);
  const target = broadcastOffsets(keepShape, x.shape);
  for (let k = 0; k < x.data.length; k++) acc[target[k]] = step(acc[target[k]], x.data[k]);
  const count = out.data.length ? x.data.length / out.data.length : 0;
  for (let i = 0; i < acc.length; i++) out.data[i] = finish(acc[i], count);
  return out;
}
""",
    "gatherAxis": r"""
/** The slices of `x` at `indices` (numbers, negative from the end) along `axis`. */
function gatherAxis(x, indices, axis, indexShape = [indices.length]) {
  const dim = x.shape[axis];
  const outer = sizeOf(x.shape.slice(0, axis)), inner = sizeOf(x.shape.slice(axis + 1));
  const out = makeTensor(x.dataType, [...x.shape.slice(0, axis), ...indexShape, ...x.shape.slice(axis + 1)]);
  let pos = 0;
  for (let o = 0; o < outer; o++) {
    for (const raw of indices) {
      const i = raw < 0 ? raw + dim : raw;
      if (!(i >= 0 && i < dim)) throw new RangeError(`index ${raw} is out of range for a dimension of ${dim}`);
      const start = (o * dim + i) * inner;
      if (inner === 1) out.data[pos] = x.data[start];
      else out.data.set(x.data.subarray(start, start + inner), pos);
      pos += inner;
    }
  }
  return out;
}
""",
    "coordinates": r"""
/** Calls fn(index array, flat offset) for every element of `shape` in row-major order. */
function forEachIndex(shape, fn) {
  const n = sizeOf(shape), index = new Array(shape.length).fill(0);
  for (let k = 0; k < n; k++) {
    fn(index, k);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}
""",
}
"""Helpers written once each where an operator needs them (`needs` of `host_js_ops.JsOp`)."""
