"""The token choice of the JavaScript generator (`SAMPLER_JS`, appended to the generator
module by `converter.io.export.generator_js`): greedy and seeded sampling exactly as
`converter.validate.sampling` defines them (docs/generation.md): PCG32 with BigInt state,
fdlibm's exp written out (so every engine gives the same bits), top-k with ties to the lower
id (a partial selection when k is small), top-p over the cumulative sums, one draw per
token. Self-contained: it uses no WebNN and imports nothing, so Node.js can run it alone."""

from __future__ import annotations

__all__ = ["SAMPLER_JS"]

SAMPLER_JS = r"""
// ---- token choice: the algorithm of docs/generation.md (and converter.validate.sampling) ----

/**
 * O'Neill's PCG32 (pcg32_random_r, XSH RR 64/32) seeded as pcg32_srandom_r(seed, 54); `seed`:
 * a safe integer, a BigInt or a decimal string in [0, 2**64).
 */
export class Pcg32 {
  constructor(seed) {
    if (typeof seed === "number" && !Number.isSafeInteger(seed)) {
      throw new RangeError(`sampling seed ${seed} is not a safe integer (give a BigInt)`);
    }
    const s = BigInt(seed);
    if (s < 0n || s >= 1n << 64n) throw new RangeError(`sampling seed ${seed} is not in [0, 2**64)`);
    this.inc = (54n << 1n) | 1n;
    this.state = 0n;
    this.nextU32();
    this.state = (this.state + s) & 0xffffffffffffffffn;
    this.nextU32();
  }

  nextU32() {
    const old = this.state;
    this.state = (old * 6364136223846793005n + this.inc) & 0xffffffffffffffffn;
    const xorshifted = Number((((old >> 18n) ^ old) >> 27n) & 0xffffffffn);
    const rot = Number(old >> 59n);
    return ((xorshifted >>> rot) | (xorshifted << ((-rot) & 31))) >>> 0;
  }

  /** u32 / 2**32: a number in [0, 1). */
  nextFloat() { return this.nextU32() / 4294967296; }
}

const EXP_WORDS = new Float64Array(1);
const EXP_HIGH = new Uint32Array(EXP_WORDS.buffer);
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** exp(x) by fdlibm's algorithm (V8's Math.exp) for -700 <= x <= 700; 0 below -700. */
export function fdlibmExp(x) {
  if (x < -700) return 0;
  if (!(x <= 700)) throw new RangeError(`fdlibmExp: argument ${x} outside [-700, 700]`);
  EXP_WORDS[0] = x;
  let hx = EXP_HIGH[HIGH];
  const sign = hx >>> 31;
  hx &= 0x7fffffff;
  let k = 0, hi = 0, lo = 0;
  if (hx > 0x3fd62e42) {
    if (hx < 0x3ff0a2b2) {
      hi = x - (sign ? -6.93147180369123816490e-01 : 6.93147180369123816490e-01);
      lo = sign ? -1.90821492927058770002e-10 : 1.90821492927058770002e-10;
      k = 1 - sign - sign;
    } else {
      k = Math.trunc(1.44269504088896338700e+00 * x + (sign ? -0.5 : 0.5));
      hi = x - k * 6.93147180369123816490e-01;
      lo = k * 1.90821492927058770002e-10;
    }
    x = hi - lo;
  } else if (hx < 0x3e300000) {
    return 1 + x;
  }
  const t = x * x;
  const c = x - t * (1.66666666666666019037e-01 + t * (-2.77777777770155933842e-03 +
    t * (6.61375632143793436117e-05 + t * (-1.65339022054652515390e-06 + t * 4.13813679705723846039e-08))));
  if (k === 0) return 1 - ((x * c) / (c - 2) - x);
  const y = 1 - ((lo - (x * c) / (2 - c)) - hi);
  EXP_WORDS[0] = 0;
  EXP_HIGH[HIGH] = (k + 1023) << 20;  // 2**k, exact: k >= -1010
  return y * EXP_WORDS[0];
}

/** The id of the largest logit, ties to the lowest id, NaN never chosen (all NaN: 0). */
export function greedyToken(logits) {
  let best = 0, value = -Infinity, found = false;
  for (let i = 0; i < logits.length; i++) {
    const v = Number(logits[i]);
    if (v > value || (!found && v === value)) { best = i; value = v; found = true; }
  }
  return best;
}

/** Ids by z descending, ties by lower id, NaN left out; the first topK (0: all). */
function ranked(z, topK) {
  if (topK > 0 && topK < z.length / 8) {
    const best = [];
    for (let i = 0; i < z.length; i++) {
      const v = z[i];
      if (Number.isNaN(v) || (best.length === topK && !(v > z[best[topK - 1]]))) continue;
      let lo = 0, hi = best.length;  // first place whose value v exceeds
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (v > z[best[mid]]) hi = mid; else lo = mid + 1;
      }
      best.splice(lo, 0, i);
      if (best.length > topK) best.pop();
    }
    return best;
  }
  const ids = [];
  for (let i = 0; i < z.length; i++) if (!Number.isNaN(z[i])) ids.push(i);
  ids.sort((a, b) => (z[a] < z[b] ? 1 : z[a] > z[b] ? -1 : a - b));
  return topK > 0 ? ids.slice(0, topK) : ids;
}

/** One sampled token from `logits` (docs/generation.md, steps 2-6); one draw from `rng`. */
export function chooseToken(logits, {topK = 0, topP = 1, temperature = 1}, rng) {
  const z = Float64Array.from(logits, (v) => Number(v) / temperature);
  const order = ranked(z, topK);
  if (order.length === 0) throw new RangeError("sampling: every logit is NaN");
  const top = z[order[0]];
  const cumulative = new Float64Array(order.length);
  let total = 0;
  for (let i = 0; i < order.length; i++) {
    const v = z[order[i]];
    total += v === top ? 1 : fdlibmExp(v - top);
    cumulative[i] = total;
  }
  let count = order.length;
  if (topP < 1) {
    for (let i = 0; i < order.length; i++) {
      if (cumulative[i] / total >= topP) { count = i + 1; break; }
    }
  }
  const target = rng.nextFloat() * cumulative[count - 1];
  for (let i = 0; i < count; i++) if (cumulative[i] > target) return order[i];
  return order[count - 1];
}

/** A function logits -> token id for `sampling` ("greedy" or {topK, topP, temperature, seed}). */
export function tokenChooser(sampling = "greedy") {
  if (sampling === "greedy" || sampling == null) return greedyToken;
  const {topK = 0, topP = 1, temperature = 1, seed = 0, ...rest} = sampling;
  const unknown = Object.keys(rest);
  if (unknown.length) throw new TypeError(`sampling: unknown option(s) ${unknown.join(", ")}`);
  if (!Number.isInteger(topK) || topK < 0) throw new RangeError(`sampling topK must be an integer >= 0, got ${topK}`);
  if (!(topP > 0 && topP <= 1)) throw new RangeError(`sampling topP must be in (0, 1], got ${topP}`);
  if (!(temperature > 0 && temperature < Infinity)) throw new RangeError(`sampling temperature must be > 0, got ${temperature}`);
  const rng = new Pcg32(seed);
  return (logits) => chooseToken(logits, {topK, topP, temperature}, rng);
}
"""
