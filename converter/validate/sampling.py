"""Choosing the next token from a step's logits: greedy, or seeded sampling that gives the
same tokens in Python and in the JavaScript generator (`converter.io.export.generator_js`,
whose sampler, `converter.io.export.sampler_js`, carries the same algorithm line for line).
docs/generation.md states the definition.

```python
from converter.validate.sampling import Sampling, TokenChooser
chooser = TokenChooser(Sampling(top_k=40, top_p=0.9, temperature=0.8, seed=7))
token = chooser(logits)        # logits: [vocab] float32 (or float16, float64)
```

The definition, step by step (every number a float64):

1. Greedy (`sampling=None` or "greedy"): the token with the largest logit, ties to the lowest
   id (NaN never wins).
2. Temperature: z_i = logit_i / temperature (temperature > 0).
3. Top-k: the ids sorted by z descending, ties by lower id (a total order); the first
   `top_k` are kept (0: all). NaN logits are dropped first.
4. Softmax over the kept list, in its order: w_i = exp(z_i - z_0) with `exp` the fdlibm
   algorithm (`fdlibm_exp`, the one V8's Math.exp runs, written out here and in the
   JavaScript so that both give the same bits on any engine; arguments below -700 give 0),
   c_i = w_0 + ... + w_i summed left to right, p_i = w_i / c_last.
5. Top-p (0 < top_p <= 1): the shortest prefix whose mass c_i / c_last >= top_p is kept
   (all when none reaches it).
6. One draw per token: u = next_u32() / 2**32 from PCG32 (O'Neill's pcg32_random_r, XSH RR
   64/32, state seeded as pcg32_srandom_r(seed, 54)); the token is the first kept i with
   c_i > u * c_m (c_m: the kept prefix's sum), the last kept one if rounding leaves none.

Restrictions: the seed is an integer in [0, 2**64); the generator draws one number per
generated token and nothing else, so the same seed and logits give the same tokens.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PCG32", "Sampling", "TokenChooser", "choose_token", "fdlibm_exp", "greedy_token",
           "sampling_of"]

_MASK64 = (1 << 64) - 1
_PCG_MULT = 6364136223846793005
_PCG_SEQ = 54


class PCG32:
    """O'Neill's PCG32 (pcg32_random_r: 64-bit LCG state, XSH RR output), seeded like
    pcg32_srandom_r(initstate=seed, initseq=54)."""

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 1 << 64:
            raise ValueError(f"sampling seed must be an integer in [0, 2**64), got {seed!r}")
        self.inc = ((_PCG_SEQ << 1) | 1) & _MASK64
        self.state = 0
        self.next_u32()
        self.state = (self.state + seed) & _MASK64
        self.next_u32()

    def next_u32(self) -> int:
        """The next 32-bit output."""
        old = self.state
        self.state = (old * _PCG_MULT + self.inc) & _MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def next_float(self) -> float:
        """u32 / 2**32: a float64 in [0, 1) (exact)."""
        return self.next_u32() / 4294967296.0


# fdlibm e_exp.c constants (as in V8's base/ieee754.cc)
_LN2_HI = (6.93147180369123816490e-01, -6.93147180369123816490e-01)
_LN2_LO = (1.90821492927058770002e-10, -1.90821492927058770002e-10)
_HALF = (0.5, -0.5)
_INV_LN2 = 1.44269504088896338700e+00
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
EXP_FLOOR = -700.0
"""`fdlibm_exp` gives 0 below this (no subnormal results, so scaling by 2**k is exact)."""


def fdlibm_exp(x: float) -> float:
    """exp(x) by fdlibm's algorithm for EXP_FLOOR <= x <= 700 (0.0 below; ValueError above
    or for NaN): the same float64 operations as the JavaScript generator's `exp`."""
    if x < EXP_FLOOR:
        return 0.0
    if not x <= 700.0:
        raise ValueError(f"fdlibm_exp: argument {x} outside [-700, 700]")
    hx = struct.unpack("<Q", struct.pack("<d", x))[0] >> 32
    sign = (hx >> 31) & 1
    hx &= 0x7FFFFFFF
    k = 0
    hi = lo = 0.0
    if hx > 0x3FD62E42:  # |x| > 0.5 ln2
        if hx < 0x3FF0A2B2:  # |x| < 1.5 ln2
            hi = x - _LN2_HI[sign]
            lo = _LN2_LO[sign]
            k = 1 - sign - sign
        else:
            k = int(_INV_LN2 * x + _HALF[sign])  # truncation toward zero, as C's (int)
            t = float(k)
            hi = x - t * _LN2_HI[0]  # exact
            lo = t * _LN2_LO[0]
        x = hi - lo
    elif hx < 0x3E300000:  # |x| < 2**-28
        return 1.0 + x
    t = x * x
    c = x - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    if k == 0:
        return 1.0 - ((x * c) / (c - 2.0) - x)
    y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi)
    return math.ldexp(y, k)  # exact: k >= -1010, so y * 2**k is a normal number


@dataclass(frozen=True)
class Sampling:
    """Seeded sampling settings (module docstring): `top_k` (0: no limit), `top_p` in
    (0, 1], `temperature` > 0, `seed` in [0, 2**64)."""

    top_k: int = 0
    top_p: float = 1.0
    temperature: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.top_k, int) or isinstance(self.top_k, bool) or self.top_k < 0:
            raise ValueError(f"sampling top_k must be an integer >= 0, got {self.top_k!r}")
        if not 0.0 < float(self.top_p) <= 1.0:
            raise ValueError(f"sampling top_p must be in (0, 1], got {self.top_p!r}")
        if not 0.0 < float(self.temperature) < math.inf:
            raise ValueError(f"sampling temperature must be > 0, got {self.temperature!r}")
        PCG32(self.seed)  # checks the seed


def sampling_of(value: Any) -> Sampling | None:
    """None for greedy (None or "greedy"), a Sampling as given, or one from a mapping with
    the JavaScript option names (topK, topP, temperature, seed) or the Python ones."""
    if value is None or value == "greedy":
        return None
    if isinstance(value, Sampling):
        return value
    if isinstance(value, dict):
        names = {"topK": "top_k", "topP": "top_p"}
        args = {names.get(str(k), str(k)): v for k, v in value.items()}
        unknown = sorted(set(args) - {"top_k", "top_p", "temperature", "seed"})
        if unknown:
            raise ValueError(f"sampling: unknown option(s) {unknown}")
        return Sampling(**args)
    raise ValueError(f"sampling must be 'greedy', a Sampling or a dict, got {value!r}")


def greedy_token(logits: Any) -> int:
    """The id of the largest logit, ties to the lowest id, NaN never chosen (all NaN: 0)."""
    z = np.asarray(logits, np.float64).reshape(-1)
    ids = np.flatnonzero(~np.isnan(z))
    return int(ids[np.argmax(z[ids])]) if ids.size else 0


def _ranked(z: np.ndarray, top_k: int) -> np.ndarray:
    """Ids by z descending, ties by lower id, NaN dropped; the first `top_k` (0: all)."""
    ids = np.flatnonzero(~np.isnan(z))
    order = ids[np.lexsort((ids, -z[ids]))]
    return order[:top_k] if top_k else order


def choose_token(logits: Any, sampling: Sampling, rng: PCG32) -> int:
    """One sampled token from `logits` [vocab] (module docstring, steps 2-6); draws one
    number from `rng`."""
    z = np.asarray(logits).reshape(-1).astype(np.float64) / float(sampling.temperature)
    order = _ranked(z, sampling.top_k)
    if order.size == 0:
        raise ValueError("sampling: every logit is NaN")
    kept: Sequence[float] = z[order].tolist()
    top = kept[0]
    cumulative: list[float] = []
    total = 0.0
    for value in kept:
        total += 1.0 if value == top else fdlibm_exp(value - top)
        cumulative.append(total)
    count = len(cumulative)
    if sampling.top_p < 1.0:
        for i, c in enumerate(cumulative):
            if c / total >= sampling.top_p:
                count = i + 1
                break
    target = rng.next_float() * cumulative[count - 1]
    for i in range(count):
        if cumulative[i] > target:
            return int(order[i])
    return int(order[count - 1])


class TokenChooser:
    """Greedy (`sampling` None) or seeded sampling with its own PCG32, one draw per call."""

    def __init__(self, sampling: Sampling | None) -> None:
        self.sampling = sampling
        self.rng = PCG32(sampling.seed) if sampling is not None else None

    def __call__(self, logits: Any) -> int:
        if self.sampling is None or self.rng is None:
            return greedy_token(logits)
        return choose_token(logits, self.sampling, self.rng)
