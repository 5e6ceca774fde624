"""MLGraphBuilder operators: shape and data movement (concat, expand, pad, reshape, reverse,
slice, split, tile, transpose, triangular).

Restrictions (spec): no zero-size dimensions anywhere; no -1/0 inference in reshape; no
negative slice starts, sizes or strides (use reverse); no negative padding (use slice);
reflection padding must be smaller than the padded dimension.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.dtypes import cast_number
from converter.core.webnn.operand import MLOperand

PAD_MODES = ("constant", "edge", "reflection")


class ShapeOps(BuilderBase):
    def concat(self, inputs: Sequence[MLOperand], axis: int, *, label: str = "") -> MLOperand:
        """Join 1..8192 tensors of one data type and rank along `axis`; every other
        dimension must match and the joined dimension must be a valid dimension."""
        op = "concat"
        self._check_state(op)
        if isinstance(inputs, (str, bytes, MLOperand)) or not isinstance(inputs, Sequence):
            raise v.fail(op, f"inputs must be a sequence of MLOperands, got {inputs!r}")
        v.tensor_count(op, "inputs", len(inputs))
        xs = [self._operand(op, "inputs", x) for x in inputs]
        first = xs[0]
        a = v.axis(op, "axis", axis, first.rank)
        for i, x in enumerate(xs[1:], 1):
            v.same_type(op, f"inputs[{i}]", x.data_type, "inputs[0]", first.data_type)
            if x.rank != first.rank:
                raise v.fail(op, f"inputs[{i}] rank {x.rank} must equal inputs[0] rank "
                                 f"{first.rank}")
            for d in range(first.rank):
                if d != a and x.shape[d] != first.shape[d]:
                    raise v.fail(op, f"inputs[{i}] shape {list(x.shape)} differs from inputs[0] "
                                     f"shape {list(first.shape)} outside axis {a}")
        shape = list(first.shape)
        shape[a] = sum(x.shape[a] for x in xs)
        return self._emit1(op, (xs, a), {"label": label or None}, first.data_type, shape)

    def expand(self, input: MLOperand, new_shape: Sequence[int], *, label: str = "") -> MLOperand:
        """Broadcast `input` unidirectionally to `new_shape` (every dimension valid)."""
        op = "expand"
        x = self._operand(op, "input", input)
        shape = v.unsigned_list(op, "newShape", new_shape)
        for d in shape:
            v.dimension(op, "newShape item", d)
        v.unidirectional_broadcast(op, x.shape, shape)
        return self._emit1(op, (x, list(shape)), {"label": label or None}, x.data_type, shape)

    def pad(self, input: MLOperand, beginning_padding: Sequence[int],
            ending_padding: Sequence[int], *, mode: str = "constant",
            value: float | int = 0, label: str = "") -> MLOperand:
        """Pad each dimension by beginningPadding/endingPadding (each list of length rank).

        mode: "constant" (fill with `value`, cast to the input data type at build time),
        "edge" (repeat the border element) or "reflection" (mirror without repeating the
        border; each padding must be smaller than its dimension).
        """
        op = "pad"
        x = self._operand(op, "input", input)
        begin = v.unsigned_list(op, "beginningPadding", beginning_padding)
        end = v.unsigned_list(op, "endingPadding", ending_padding)
        for what, pads in (("beginningPadding", begin), ("endingPadding", end)):
            if len(pads) != x.rank:
                raise v.fail(op, f"{what} length {len(pads)} must equal the input rank {x.rank}")
        v.enum(op, "mode", mode, PAD_MODES)
        if mode == "reflection":
            for d, (b, e, n) in enumerate(zip(begin, end, x.shape, strict=True)):
                if b >= n or e >= n:
                    raise v.fail(op, f"reflection padding ({b}, {e}) of dimension {d} must be "
                                     f"less than its size {n}")
        fill = cast_number(v.number(op, "value", value), x.data_type)
        shape = [b + n + e for b, n, e in zip(begin, x.shape, end, strict=True)]
        return self._emit1(op, (x, list(begin), list(end)),
                           {"mode": mode, "value": fill, "label": label or None},
                           x.data_type, shape)

    def reshape(self, input: MLOperand, new_shape: Sequence[int], *, label: str = ""
                ) -> MLOperand:
        """Same elements, new shape: every dimension valid (no -1 or 0), same element count;
        `[]` makes a scalar of a one-element input."""
        op = "reshape"
        x = self._operand(op, "input", input)
        shape = v.unsigned_list(op, "newShape", new_shape)
        for d in shape:
            v.dimension(op, "newShape item", d)
        count = math.prod(shape)
        size = math.prod(x.shape)
        if count != size:
            raise v.fail(op, f"newShape {list(shape)} has {count} elements, the input shape "
                             f"{list(x.shape)} has {size}")
        return self._emit1(op, (x, list(shape)), {"label": label or None}, x.data_type, shape)

    def reverse(self, input: MLOperand, *, axes: Sequence[int] | None = None,
                label: str = "") -> MLOperand:
        """Reverse along `axes` (unique, < rank); absent = every axis, [] = none."""
        op = "reverse"
        x = self._operand(op, "input", input)
        ax = tuple(range(x.rank)) if axes is None else v.axes(op, "axes", axes, x.rank)
        return self._emit1(op, (x,), {"axes": list(ax), "label": label or None},
                           x.data_type, x.shape)

    def slice(self, input: MLOperand, starts: Sequence[int], sizes: Sequence[int], *,
              strides: Sequence[int] | None = None, label: str = "") -> MLOperand:
        """Take `sizes[d]` elements from `starts[d]` every `strides[d]`-th one (lists of length
        rank; sizes >= 1, strides >= 1, starts + sizes <= dimension). Output dimension
        ceil(size / stride)."""
        op = "slice"
        x = self._operand(op, "input", input)
        st = v.unsigned_list(op, "starts", starts)
        sz = v.unsigned_list(op, "sizes", sizes)
        for what, values in (("starts", st), ("sizes", sz)):
            if len(values) != x.rank:
                raise v.fail(op, f"{what} length {len(values)} must equal the input rank "
                                 f"{x.rank}")
        sd = (1,) * x.rank if strides is None else v.unsigned_list(op, "strides", strides)
        if len(sd) != x.rank:
            raise v.fail(op, f"strides length {len(sd)} must equal the input rank {x.rank}")
        shape = []
        for d, (s, n, k, dim) in enumerate(zip(st, sz, sd, x.shape, strict=True)):
            if n == 0:
                raise v.fail(op, f"sizes[{d}] must not be 0")
            if k < 1:
                raise v.fail(op, f"strides[{d}] ({k}) must be at least 1")
            if s + n > dim:
                raise v.fail(op, f"starts[{d}] + sizes[{d}] ({s} + {n}) exceeds the input "
                                 f"dimension {dim}")
            shape.append(-(-n // k))
        return self._emit1(op, (x, list(st), list(sz)),
                           {"strides": list(sd), "label": label or None}, x.data_type, shape)

    def split(self, input: MLOperand, splits: int | Sequence[int], *, axis: int = 0,
              label: str = "") -> list[MLOperand]:
        """Split along `axis` into `splits` equal parts (must divide the dimension), or into
        parts of the listed sizes (no zeros, summing to the dimension); at most 8192 parts."""
        op = "split"
        x = self._operand(op, "input", input)
        a = v.axis(op, "axis", axis, x.rank)
        dim = x.shape[a]
        if isinstance(splits, (int, np.integer)) and not isinstance(splits, bool):
            count = v.unsigned(op, "splits", splits)
            if count == 0:
                raise v.fail(op, "splits must not be 0")
            if dim % count:
                raise v.fail(op, f"splits ({count}) does not divide the input dimension "
                                 f"{dim} of axis {a}")
            v.tensor_count(op, "splits", count)
            parts = [dim // count] * count
            stored: int | list[int] = count
        else:
            parts = list(v.unsigned_list(op, "splits", splits))
            v.tensor_count(op, "splits", len(parts))
            if 0 in parts:
                raise v.fail(op, f"splits {parts} must not contain 0")
            if sum(parts) != dim:
                raise v.fail(op, f"splits {parts} sum to {sum(parts)}, not the input "
                                 f"dimension {dim} of axis {a}")
            stored = parts
        outputs = []
        for p in parts:
            shape = list(x.shape)
            shape[a] = p
            outputs.append((x.data_type, shape))
        return self._emit(op, (x, stored), {"axis": a, "label": label or None}, outputs)

    def tile(self, input: MLOperand, repetitions: Sequence[int], *, label: str = ""
             ) -> MLOperand:
        """Repeat the input `repetitions[d]` times along each dimension (length rank, no
        zeros)."""
        op = "tile"
        x = self._operand(op, "input", input)
        reps = v.unsigned_list(op, "repetitions", repetitions)
        if len(reps) != x.rank:
            raise v.fail(op, f"repetitions length {len(reps)} must equal the input rank "
                             f"{x.rank}")
        if 0 in reps:
            raise v.fail(op, f"repetitions {list(reps)} must not contain 0")
        shape = [d * r for d, r in zip(x.shape, reps, strict=True)]
        return self._emit1(op, (x, list(reps)), {"label": label or None}, x.data_type, shape)

    def transpose(self, input: MLOperand, *, permutation: Sequence[int] | None = None,
                  label: str = "") -> MLOperand:
        """Permute the dimensions; `permutation` (default: reversed axes) must be a
        permutation of 0..rank-1."""
        op = "transpose"
        x = self._operand(op, "input", input)
        if permutation is None:
            perm = tuple(reversed(range(x.rank)))
        else:
            perm = v.unsigned_list(op, "permutation", permutation)
            if len(perm) != x.rank:
                raise v.fail(op, f"permutation length {len(perm)} must equal the input rank "
                                 f"{x.rank}")
            if sorted(perm) != list(range(x.rank)):
                raise v.fail(op, f"permutation {list(perm)} is not a permutation of "
                                 f"0..{x.rank - 1}")
        shape = [x.shape[p] for p in perm]
        return self._emit1(op, (x,), {"permutation": list(perm), "label": label or None},
                           x.data_type, shape)

    def triangular(self, input: MLOperand, *, upper: bool = True, diagonal: int = 0,
                   label: str = "") -> MLOperand:
        """Keep the upper (j - i >= diagonal) or lower (j - i <= diagonal) triangle of each
        matrix in the last two dimensions (rank >= 2) and zero the rest."""
        op = "triangular"
        x = self._operand(op, "input", input)
        up = v.boolean(op, "upper", upper)
        diag = v.signed(op, "diagonal", diagonal)
        return self._emit1(op, (x,), {"upper": up, "diagonal": diag, "label": label or None},
                           x.data_type, x.shape)
