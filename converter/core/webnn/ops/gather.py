"""MLGraphBuilder operators: gather, gatherElements, gatherND, scatterElements, scatterND.

Restrictions (spec): indices are int32, uint32 or int64; index values are not checked at build
time. At run time negative indices count from the end of their dimension, and the reference
runtime clamps out-of-range values into [-size, size - 1] first (so too-large indices pick the
last element, too-small ones the first). For the scatter ops, when several indices address the
same element, the update that comes last in row-major order of `updates` wins.
"""

from __future__ import annotations

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.operand import MLOperand


class GatherOps(BuilderBase):
    def gather(self, input: MLOperand, indices: MLOperand, *, axis: int = 0,
               label: str = "") -> MLOperand:
        """Pick slices of `input` along `axis`; output shape is
        input.shape[:axis] + indices.shape + input.shape[axis + 1:]."""
        op = "gather"
        x = self._operand(op, "input", input)
        idx = self._operand(op, "indices", indices)
        a = v.axis(op, "axis", axis, x.rank)
        shape = x.shape[:a] + idx.shape + x.shape[a + 1:]
        return self._emit1(op, (x, idx), {"axis": a, "label": label or None}, x.data_type,
                           shape)

    def gather_elements(self, input: MLOperand, indices: MLOperand, *, axis: int = 0,
                        label: str = "") -> MLOperand:
        """ONNX GatherElements: output[..i..] = input[..indices[..i..]..] with the index
        replacing the coordinate of `axis`. `indices` has the input's rank and shape except
        along `axis`; the output has the indices' shape (spec text says input shape: a known
        spec bug)."""
        op = "gatherElements"
        x = self._operand(op, "input", input)
        idx = self._operand(op, "indices", indices)
        a = v.axis(op, "axis", axis, x.rank)
        _same_shape_except_axis(op, x.shape, idx.shape, a)
        return self._emit1(op, (x, idx), {"axis": a, "label": label or None}, x.data_type,
                           idx.shape)

    def gather_nd(self, input: MLOperand, indices: MLOperand, *, label: str = ""
                  ) -> MLOperand:
        """ONNX GatherND (batch_dims 0): the last dimension k of `indices` (k <= input rank)
        holds coordinates; output shape is indices.shape[:-1] + input.shape[k:]."""
        op = "gatherND"
        x = self._operand(op, "input", input)
        idx = self._operand(op, "indices", indices)
        k = idx.shape[-1]
        if k > x.rank:
            raise v.fail(op, f"indices last dimension ({k}) must not exceed the input rank "
                             f"({x.rank})")
        shape = idx.shape[:-1] + x.shape[k:]
        return self._emit1(op, (x, idx), {"label": label or None}, x.data_type, shape)

    def scatter_elements(self, input: MLOperand, indices: MLOperand, updates: MLOperand, *,
                         axis: int = 0, label: str = "") -> MLOperand:
        """A copy of `input` where output[..indices[..i..]..] = updates[..i..] (the index
        replacing the coordinate of `axis`). `indices` has the input's rank and shape except
        along `axis`; `updates` has the indices' shape and the input's data type. Output:
        input shape."""
        op = "scatterElements"
        x = self._operand(op, "input", input)
        idx = self._operand(op, "indices", indices)
        upd = self._operand(op, "updates", updates)
        v.same_type(op, "updates", upd.data_type, "input", x.data_type)
        a = v.axis(op, "axis", axis, x.rank)
        _same_shape_except_axis(op, x.shape, idx.shape, a)
        v.same_shape(op, "updates", upd.shape, idx.shape)
        return self._emit1(op, (x, idx, upd), {"axis": a, "label": label or None},
                           x.data_type, x.shape)

    def scatter_nd(self, input: MLOperand, indices: MLOperand, updates: MLOperand, *,
                   label: str = "") -> MLOperand:
        """ONNX ScatterND without reduction: a copy of `input` where the slice at each
        coordinate of `indices` (last dimension k <= input rank) is replaced by the matching
        slice of `updates`, whose shape must be indices.shape[:-1] + input.shape[k:] and data
        type the input's. Output: input shape."""
        op = "scatterND"
        x = self._operand(op, "input", input)
        idx = self._operand(op, "indices", indices)
        upd = self._operand(op, "updates", updates)
        v.same_type(op, "updates", upd.data_type, "input", x.data_type)
        k = idx.shape[-1]
        if k > x.rank:
            raise v.fail(op, f"indices last dimension ({k}) must not exceed the input rank "
                             f"({x.rank})")
        v.same_shape(op, "updates", upd.shape, idx.shape[:-1] + x.shape[k:])
        return self._emit1(op, (x, idx, upd), {"label": label or None}, x.data_type, x.shape)


def _same_shape_except_axis(op: str, input_shape: tuple[int, ...],
                            indices_shape: tuple[int, ...], axis: int) -> None:
    if len(indices_shape) != len(input_shape):
        raise v.fail(op, f"indices rank {len(indices_shape)} must equal the input rank "
                         f"{len(input_shape)}")
    for d, (n, m) in enumerate(zip(input_shape, indices_shape, strict=True)):
        if d != axis and n != m:
            raise v.fail(op, f"indices shape {list(indices_shape)} must equal the input shape "
                             f"{list(input_shape)} except along axis {axis}")
