"""Token-level mutations of the `.webnn` text format: numbers, identifiers (value names, op
names, data types, keywords), strings (weights keys), punctuation, shapes, whole lines,
nesting depth and encoding."""

from __future__ import annotations

import random
import re

from tools.fuzz.mutators.base import Mutation
from tools.fuzz.mutators.common import evil_string

TOKEN = re.compile(r'(?P<ws>\s+)|(?P<str>"(?:[^"\\\n]|\\.)*")|'
                   r'(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|'
                   r'(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>.)', re.S)
NUMBERS = ["0", "-1", "1", "2147483647", "2147483648", "-2147483649", "4294967296",
           "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e309",
           "-1e309", "1e-400", "-0", "0.5", "1.0", "NaN", "Infinity", "inf", "0x10", "1_0",
           "00012", "1e", "--1", "1" * 401, "9" * 5000, "+1", ".5", "5."]
DTYPES = ["f32", "f16", "i8", "u8", "i32", "u32", "i64", "u64", "i4", "u4", "bool", "f64",
          "bf16", "float32", "xyz", "f32x"]
OPS = ["conv2d", "add", "matmul", "gemm", "reshape", "transpose", "gather", "concat", "slice",
       "split", "relu", "softmax", "reduceSum", "expand", "pad", "resample2d", "gru", "lstm",
       "where", "cast", "constant", "input", "identity", "triangular", "dequantizeLinear",
       "quantizeLinear", "frobnicate", "webnn_graph"]
KEYWORDS = ["webnn_graph", "inputs", "consts", "nodes", "outputs", "v1", "v2", "@weights",
            "@scalar", "@bytes", "true", "false", "null"]
STRINGS = ['"\\u0000"', '"\\n"', '"a\nb"', '"\\ud800"', '"unterminated', '""',
           '"' + "k" * 10000 + '"', '"../canary.bin"', '"\\x41"', '"\u2028"', '"\x1b[2J"']


def _tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "punct", m.group()) for m in TOKEN.finditer(text)]


def mutate_text(text: str, rng: random.Random, mut: Mutation) -> str:
    how = rng.choice(["number", "number", "number", "ident", "ident", "string", "punct",
                      "line", "line", "shape", "nest", "encoding", "version"])
    toks = _tokens(text)
    idx = {k: [i for i, (kind, _) in enumerate(toks) if kind == k]
           for k in ("num", "id", "str", "punct")}
    idents = sorted({v for k, v in toks if k == "id"})
    if how == "number" and idx["num"]:
        i = rng.choice(idx["num"])
        toks[i] = ("num", rng.choice(NUMBERS))
    elif how == "ident" and idx["id"]:
        i = rng.choice(idx["id"])
        pool = rng.choice([idents, DTYPES, OPS, KEYWORDS, [evil_string(rng) or "e"]])
        toks[i] = ("id", rng.choice(pool))
    elif how == "string" and idx["str"]:
        i = rng.choice(idx["str"])
        toks[i] = ("str", rng.choice(STRINGS + ['"' + rng.choice(idents) + '"']))
    elif how == "punct" and idx["punct"]:
        i = rng.choice(idx["punct"])
        what = rng.choice(["delete", "dup", "replace"])
        value = toks[i][1]
        toks[i] = ("punct", "" if what == "delete" else value * 2 if what == "dup"
                   else rng.choice(list("{}[]();,=:@<>") + ["\x00"]))
    elif how == "line":
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        what = rng.choice(["delete", "dup", "swap", "top", "repeat"])
        if what == "delete":
            lines.pop(i)
        elif what == "dup":
            lines.insert(i, lines[i])
        elif what == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif what == "top":
            lines.insert(0, lines.pop(i))
        else:
            lines[i:i + 1] = [lines[i]] * rng.choice([100, 20000])
        mut.note("webnn.line", what)
        return "\n".join(lines)
    elif how == "shape":
        m = list(re.finditer(r"\[[-0-9, ]*\]", text))
        if m:
            s = rng.choice(m)
            dims = rng.choice(["[2147483647, 2147483647]", "[]", "[0]", "[-1]",
                               "[" + ", ".join(["2"] * 64) + "]", "[1, 1, 1, 1, 1, 1, 1, 1, 1]",
                               "[65536, 65536, 65536]", "[3000000000]", "[1,]", "[,]"])
            mut.note("webnn.shape", dims[:24])
            return text[:s.start()] + dims + text[s.end():]
    elif how == "nest":
        depth = rng.choice([33, 200, 100000])
        m = list(re.finditer(r"\[[-0-9, ]*\]", text))
        if m:
            s = rng.choice(m)
            mut.note("webnn.nest", str(depth))
            return text[:s.start()] + "[" * depth + "1" + "]" * depth + text[s.end():]
    elif how == "encoding":
        what = rng.choice(["bom", "crlf", "nul", "latin1", "surrogate", "cr"])
        mut.note("webnn.encoding", what)
        if what == "bom":
            return "\ufeff" + text
        if what == "crlf":
            return text.replace("\n", "\r\n")
        if what == "cr":
            return text.replace("\n", "\r")
        i = rng.randrange(len(text) + 1)
        return text[:i] + {"nul": "\x00", "latin1": "\udce9", "surrogate": "\udcff"}[what] \
            + text[i:]
    elif how == "version":
        mut.note("webnn.version")
        return re.sub(r"\bv1\b", rng.choice(["v0", "v2", "v99999999999999999999", "V1", ""]),
                      text, count=1)
    mut.note(f"webnn.{how}")
    return "".join(v for _, v in toks)


def mutate(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    text = data.decode("utf-8", "surrogateescape")
    for _ in range(rng.choice([1, 1, 2, 3])):
        text = mutate_text(text, rng, mut)
    return text.encode("utf-8", "surrogateescape")
