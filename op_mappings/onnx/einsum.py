"""ONNX Einsum -> WebNN transpose / reshape / matmul / mul / reduceSum.

Any equation is accepted (explicit or implicit output, `...` broadcasting, any number of
operands): repeated letters inside one operand take the diagonal (mul by a constant identity
mask + reduceSum), letters used nowhere else are summed out first, and operands are
contracted pairwise: float operands as a batched matmul ([batch, left, contracted] x
[batch, contracted, right]), integer ones as broadcast mul + reduceSum. The result is
transposed to the output letter order.
Restrictions: the WebNN types of matmul (float32/float16) or mul/reduceSum (integers);
size-1 broadcasting only through `...` or equal letters with size 1 on one side.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

Term = tuple[Any, list[str]]


def parse(equation: str, ranks: list[int]) -> tuple[list[list[str]], list[str]]:
    """Letters of every operand and of the output, `...` expanded to private letters."""
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(ranks):
        raise InvalidModel(f"Einsum equation {equation!r} has {len(specs)} operands, the node "
                           f"has {len(ranks)} inputs")
    ell_max = 0
    out: list[list[str]] = []
    for spec, rank in zip(specs, ranks, strict=True):
        explicit = spec.replace("...", "")
        n_ell = rank - len(explicit)
        if "..." not in spec and n_ell:
            raise InvalidModel(f"Einsum term {spec!r} does not match rank {rank}")
        ell_max = max(ell_max, n_ell)
        before, _, after = spec.partition("...")
        ell = [chr(0x100 + ell_max - n_ell + i) for i in range(n_ell)] if "..." in spec else []
        out.append(list(before) + ell + list(after))
    ell_letters = [chr(0x100 + i) for i in range(ell_max)]
    if "->" in eq:
        before, dots, after = rhs.partition("...")
        result = list(before) + (ell_letters if dots else []) + list(after)
    else:
        counts = Counter(c for spec in specs for c in spec.replace("...", ""))
        result = ell_letters + sorted(c for c, n in counts.items() if n == 1)
    return out, result


class _Einsum:
    def __init__(self, ctx: ImportContext) -> None:
        self.ctx, self.b = ctx, ctx.builder

    def diagonal(self, x: Any, letters: list[str]) -> Term:
        b = self.b
        while len(set(letters)) != len(letters):
            seen: dict[str, int] = {}
            for q, c in enumerate(letters):
                if c in seen:
                    p = seen[c]
                    break
                seen[c] = q
            n = x.shape[p]
            shape = [1] * x.rank
            shape[p], shape[q] = n, n
            mask = np.eye(n, dtype=x.data_type).reshape(shape)
            x = b.reduce_sum(b.mul(x, self.ctx.constant(mask)), axes=[q])
            letters = letters[:q] + letters[q + 1:]
        return x, letters

    def sum_out(self, x: Any, letters: list[str], keep: set[str]) -> Term:
        drop = [i for i, c in enumerate(letters) if c not in keep]
        if not drop:
            return x, letters
        x = self.b.reduce_sum(x, axes=drop)
        return x, [c for c in letters if c in keep]

    def permute(self, x: Any, letters: list[str], order: list[str]) -> Any:
        perm = [letters.index(c) for c in order]
        return x if perm == list(range(len(perm))) else self.b.transpose(x, permutation=perm)

    def contract(self, a: Term, c: Term, keep: set[str]) -> Term:
        b = self.b
        (x, lx), (y, ly) = a, c
        sizes: dict[str, int] = {}
        for t, ls in ((x, lx), (y, ly)):
            for d, ch in zip(t.shape, ls, strict=True):
                if sizes.get(ch, 1) not in (1, d) and d != 1:
                    raise InvalidModel(f"Einsum letter {ch!r} has sizes {sizes[ch]} and {d}")
                sizes[ch] = max(sizes.get(ch, 1), d)

        def widen(t: Any, ls: list[str]) -> Any:
            want = [sizes[ch] for ch in ls]
            return t if list(t.shape) == want else b.expand(t, want)

        x, y = widen(x, lx), widen(y, ly)
        both = [ch for ch in lx if ch in ly]
        batch = [ch for ch in both if ch in keep]
        con = [ch for ch in both if ch not in keep]
        left = [ch for ch in lx if ch not in ly]
        right = [ch for ch in ly if ch not in lx]
        dims = [sizes[ch] for ch in batch], [sizes[ch] for ch in left]
        if x.data_type in FLOAT_TYPES:
            bb = math.prod(dims[0])
            ll, kk = math.prod(dims[1]), math.prod(sizes[ch] for ch in con)
            rr = math.prod(sizes[ch] for ch in right)
            xm = b.reshape(self.permute(x, lx, batch + left + con), [bb, ll, kk])
            ym = b.reshape(self.permute(y, ly, batch + con + right), [bb, kk, rr])
            out = b.matmul(xm, ym)
            letters = batch + left + right
            return b.reshape(out, [sizes[ch] for ch in letters]), letters
        order = batch + left + con + right

        def spread(t: Any, ls: list[str]) -> Any:
            t = self.permute(t, ls, [ch for ch in order if ch in ls])
            return b.reshape(t, [sizes[ch] if ch in ls else 1 for ch in order])

        prod = b.mul(spread(x, lx), spread(y, ly))
        axes = [order.index(ch) for ch in con]
        out = b.reduce_sum(prod, axes=axes) if axes else prod
        return out, [ch for ch in order if ch not in con]


@onnx_op("Einsum", since=12)
def einsum(ctx: ImportContext, node: Node) -> Outputs:
    operands = [ctx.operand(n) for n in node.inputs if n]
    terms_letters, result = parse(str(node.attrs["equation"]), [o.rank for o in operands])
    e = _Einsum(ctx)
    terms = [e.diagonal(o, ls) for o, ls in zip(operands, terms_letters, strict=True)]
    out_set = set(result)

    def needed(skip: int, upto: list[Term]) -> set[str]:
        return out_set | {c for k, (_, ls) in enumerate(upto) if k != skip for c in ls}

    terms = [e.sum_out(t, ls, needed(i, terms)) for i, (t, ls) in enumerate(terms)]
    acc = terms[0]
    for i in range(1, len(terms)):
        keep = out_set | {c for _, ls in terms[i + 1:] for c in ls}
        acc = e.contract(acc, terms[i], keep)
        acc = e.sum_out(acc[0], acc[1], keep)
    x, letters = acc
    if sorted(letters) != sorted(result):
        raise InvalidModel(f"Einsum output letters {result} do not match {letters}")
    y = e.permute(x, letters, result)
    return [y if y.kind == "output" else ctx.builder.identity(y)]
