"""Token choice (`converter.validate.sampling`) and its JavaScript twin (the generator
module's sampler, `converter.io.export.sampler_js.SAMPLER_JS`).

References, not self-agreement: PCG32's first outputs for pcg32_srandom_r(42, 54) are the
ones the reference implementation's demo prints (pcg-c, pcg32-demo: 0xa15c02b7 0x7b47f409
...); `fdlibm_exp` is within one ulp of the C library's exp and bit-equal to V8's Math.exp
(Node.js); the sampled frequencies follow the float64 softmax of the logits written from the
definition with numpy. The JavaScript sampler, run in Node.js on the same logits and seeds,
chooses the same tokens as the Python one (and draws the same numbers).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from converter.io.export.sampler_js import SAMPLER_JS
from converter.validate.sampling import (
    PCG32,
    Sampling,
    TokenChooser,
    choose_token,
    fdlibm_exp,
    greedy_token,
    sampling_of,
)

PCG_DEMO = [0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293, 0xBFA4784B, 0xCBED606E]
"""pcg32-demo's first six outputs of pcg32_srandom_r(&rng, 42u, 54u) (pcg-c)."""

NODE = shutil.which("node")


def test_pcg32_reference_outputs() -> None:
    rng = PCG32(42)
    assert [rng.next_u32() for _ in range(6)] == PCG_DEMO
    assert PCG32(42).next_float() == PCG_DEMO[0] / 2**32
    for bad in (-1, 2**64, 1.5, True):
        with pytest.raises(ValueError, match="seed"):
            PCG32(bad)  # type: ignore[arg-type]


def test_fdlibm_exp_within_one_ulp_of_libm() -> None:
    xs = np.random.default_rng(0).uniform(-700, 700, 20000).tolist() + [
        0.0, -0.0, 1e-30, -1e-9, 0.34, -0.35, 1.03, -1.04, -699.99, 700.0]
    for x in xs:
        assert abs(fdlibm_exp(x) - math.exp(x)) <= math.ulp(math.exp(x)), x
    assert fdlibm_exp(-700.5) == 0.0 and fdlibm_exp(-math.inf) == 0.0
    with pytest.raises(ValueError):
        fdlibm_exp(math.nan)


def test_greedy_ties_to_lowest_id_and_skips_nan() -> None:
    assert greedy_token([1.0, 3.0, 3.0, 2.0]) == 1
    assert greedy_token([math.nan, -math.inf, 0.5, 0.5]) == 2
    assert greedy_token([math.nan, -math.inf, -math.inf]) == 1
    assert greedy_token([math.nan, math.nan]) == 0
    assert TokenChooser(None)(np.float32([0, 2, 1])) == 1
    assert sampling_of("greedy") is None and sampling_of(None) is None


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def test_sampled_frequencies_follow_the_distribution() -> None:
    """top_k=3 at temperature 0.5 over 6 logits: the draws of 6000 tokens match the float64
    softmax of the 3 largest z within 4 standard deviations; the others never come."""
    logits = np.float32([0.1, 1.0, 0.7, -2.0, 0.9, 0.2])
    sampling = Sampling(top_k=3, temperature=0.5, seed=3)
    chooser = TokenChooser(sampling)
    counts = np.bincount([chooser(logits) for _ in range(6000)], minlength=6)
    kept = [1, 4, 2]
    p = _softmax(np.float64(logits[kept]) / 0.5)
    assert counts[[0, 3, 5]].sum() == 0
    for k, pk in zip(kept, p, strict=True):
        assert abs(counts[k] - 6000 * pk) < 4 * math.sqrt(6000 * pk * (1 - pk))


def test_top_k_ties_top_p_prefix_and_edges() -> None:
    # top_k=1 is greedy whatever the draw; ties keep the lower id first
    assert {choose_token([2.0, 5.0, 5.0], Sampling(top_k=1, seed=s), PCG32(s))
            for s in range(20)} == {1}
    # top_p keeps the shortest prefix with mass >= p: 0.5 of [0.5, 0.25, 0.25] is one token
    z = np.log(np.float64([0.25, 0.5, 0.25]))
    assert {choose_token(z, Sampling(top_p=0.5, seed=s), PCG32(s)) for s in range(50)} == {1}
    # just above 0.5: the second (tie: id 0 before id 2) joins
    got = {choose_token(z, Sampling(top_p=0.5001, seed=s), PCG32(s)) for s in range(200)}
    assert got == {0, 1}
    # NaN logits are never drawn; infinities take all the mass
    assert {choose_token([math.nan, 1.0, math.nan], Sampling(seed=s), PCG32(s))
            for s in range(20)} == {1}
    assert {choose_token([0.0, math.inf, 3.0, math.inf], Sampling(seed=s), PCG32(s))
            for s in range(50)} == {1, 3}
    with pytest.raises(ValueError, match="every logit is NaN"):
        choose_token([math.nan], Sampling(), PCG32(0))
    for bad in ({"top_k": -1}, {"top_p": 0.0}, {"top_p": 1.5}, {"temperature": 0.0}):
        with pytest.raises(ValueError):
            Sampling(**bad)  # type: ignore[arg-type]
    assert sampling_of({"topK": 5, "topP": 0.9, "seed": 2}) == Sampling(5, 0.9, 1.0, 2)
    with pytest.raises(ValueError, match="unknown"):
        sampling_of({"top": 1})


def _cases() -> list[dict[str, object]]:
    rng = np.random.default_rng(1)
    cases: list[dict[str, object]] = []
    for i in range(60):
        vocab = int(rng.choice([5, 64, 600]))
        logits = (rng.standard_normal(vocab) * rng.choice([0.5, 3.0, 20.0])).astype(np.float32)
        if i % 5 == 0:
            logits[rng.integers(0, vocab, 3)] = logits.max()  # ties at the top
        if i % 7 == 0:
            logits[rng.integers(0, vocab, 2)] = np.nan
        cases.append({"logits": [None if math.isnan(v) else v for v in logits.tolist()],
                      "sampling": {"topK": int(rng.choice([0, 1, 3, 40])),
                                   "topP": float(rng.choice([1.0, 0.9, 0.3])),
                                   "temperature": float(rng.choice([1.0, 0.7, 1.6])),
                                   "seed": int(rng.integers(0, 2**53)) if i % 3 else
                                   str(int(rng.integers(0, 2**63)) * 2 + i % 2)}})
    return cases


@pytest.mark.skipif(NODE is None, reason="needs Node.js")
def test_javascript_sampler_chooses_the_same_tokens(tmp_path: Path) -> None:
    """60 logit vectors (vocab 5-600, ties, NaN, several scales) x 8 steps each: the module's
    tokenChooser in Node.js gives Python's tokens; fdlibmExp and Math.exp give Python's
    fdlibm_exp bits; Pcg32 gives the reference outputs."""
    cases = _cases()
    want = []
    for case in cases:
        s = case["sampling"]
        assert isinstance(s, dict)
        chooser = TokenChooser(sampling_of({**s, "seed": int(s["seed"])}))
        values = case["logits"]
        assert isinstance(values, list)
        row = np.float32([math.nan if v is None else v for v in values])
        want.append([chooser(row) for _ in range(8)])
    xs = np.random.default_rng(2).uniform(-700, 10, 3000).tolist()
    (tmp_path / "sampler.mjs").write_text(SAMPLER_JS, encoding="utf-8")
    (tmp_path / "cases.json").write_text(json.dumps({"cases": cases, "xs": xs}))
    (tmp_path / "run.mjs").write_text("""
import {readFileSync} from "node:fs";
import {tokenChooser, fdlibmExp, Pcg32} from "./sampler.mjs";
const {cases, xs} = JSON.parse(readFileSync(new URL("./cases.json", import.meta.url)));
const tokens = cases.map(({logits, sampling}) => {
  const choose = tokenChooser(sampling);
  const row = Float32Array.from(logits.map((v) => v ?? NaN));
  return Array.from({length: 8}, () => choose(row));
});
const rng = new Pcg32(42);
console.log(JSON.stringify({tokens, exp: xs.map(fdlibmExp), mathExp: xs.map(Math.exp),
                            pcg: Array.from({length: 6}, () => rng.nextU32())}));
""")
    out = subprocess.run([str(NODE), str(tmp_path / "run.mjs")], capture_output=True,
                         text=True, check=True).stdout
    got = json.loads(out)
    assert got["pcg"] == PCG_DEMO
    ours = [fdlibm_exp(x) for x in xs]
    assert got["exp"] == ours
    assert got["mathExp"] == ours  # V8's Math.exp is fdlibm's
    assert got["tokens"] == want
