"""The case graphs of the quantized sweep (`converter.validate.sweep_quantized`): quantization
parameters (`QParams`) and `CaseGraph`, which writes a graph in the WPT JSON form of the
conformance cases (`converter/validate/wpt/README.md`) one operator at a time, with helpers for
dequantized graph inputs and constants and quantized outputs.

Restrictions: per-channel parameters lie along the last axis; graph inputs are fed integers
("int" I/O) or floats quantized by the graph ("float" I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RANGE = {"int8": (-128, 127), "uint8": (0, 255)}
"""The value range of each quantized type."""


@dataclass(frozen=True)
class QParams:
    """Quantization parameters: per tensor (numbers) or per channel along the last axis
    (tuples)."""

    scale: float | tuple[float, ...]
    zero: int | tuple[int, ...]

    @property
    def tensor_scale(self) -> float:
        """The scale of per-tensor parameters."""
        assert not isinstance(self.scale, tuple), "per-channel parameters"
        return self.scale

    def arrays(self, rank: int, qtype: str) -> tuple[np.ndarray, np.ndarray]:
        """(scale, zero point) of the input's rank."""
        s = np.asarray(self.scale, np.float32)
        shape = (1,) * (rank - s.ndim) + s.shape
        return s.reshape(shape), np.asarray(self.zero).astype(qtype).reshape(shape)


def params(qtype: str, which: str) -> QParams:
    """The input ("in"), the other ("out") and per-channel ("channel", 4 channels)
    parameters of a case in `qtype`."""
    base = 0 if qtype == "int8" else 128
    if which == "channel":
        return QParams((0.03, 0.05, 0.07, 0.09), tuple(base + z for z in (3, -2, 0, 5)))
    if which == "in":
        return QParams(0.05, base + 3)
    return QParams(0.07, base - 5 if qtype == "int8" else 120)


@dataclass
class CaseGraph:
    """A case graph in the WPT JSON form, written one operator at a time."""

    qtype: str
    io: str
    rng: np.random.Generator
    inputs: dict[str, Any] = field(default_factory=dict)
    operators: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[tuple[str, QParams]] = field(default_factory=list)
    count: int = 0

    def _name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def tensor(self, arr: np.ndarray, *, constant: bool, stem: str = "c") -> str:
        name = self._name(stem)
        spec: dict[str, Any] = {"data": arr.ravel().tolist(),
                                "descriptor": {"shape": list(arr.shape),
                                               "dataType": arr.dtype.name}}
        if constant:
            spec["constant"] = True
        self.inputs[name] = spec
        return name

    def op(self, op: str, args: Sequence[tuple[str, Any]],
           options: dict[str, Any] | None = None, outputs: int = 1) -> list[str]:
        names = [self._name("t") for _ in range(outputs)]
        arguments = [{k: v} for k, v in args]
        if options:
            arguments.append({"options": options})
        self.operators.append({"name": op, "arguments": arguments,
                               "outputs": names[0] if outputs == 1 else names})
        return names

    def qconst(self, values: np.ndarray, scale: np.ndarray | float, zero: np.ndarray | int,
               qtype: str) -> str:
        """dequantizeLinear of a constant: scale / zero point of the value's rank."""
        q = self.tensor(values.astype(qtype), constant=True)
        return self.dq(q, scale, zero, qtype, values.ndim)

    def dq(self, q: str, scale: np.ndarray | float, zero: np.ndarray | int, qtype: str,
           rank: int) -> str:
        s = np.asarray(scale, np.float32).reshape(np.shape(scale) or (1,) * rank)
        z = np.asarray(zero).astype(qtype).reshape(s.shape)
        sn, zn = self.tensor(s, constant=True), self.tensor(z, constant=True)
        return self.op("dequantizeLinear", [("input", q), ("scale", sn), ("zeroPoint", zn)])[0]

    def q(self, x: str, p: QParams, rank: int) -> str:
        s, z = p.arrays(rank, self.qtype)
        sn, zn = self.tensor(s, constant=True), self.tensor(z, constant=True)
        return self.op("quantizeLinear", [("input", x), ("scale", sn), ("zeroPoint", zn)])[0]

    def source(self, shape: Sequence[int], p: QParams) -> str:
        """A dequantized graph input: integer values fed as they are ("int" I/O), or float
        values quantized by the graph ("float" I/O)."""
        lo, hi = RANGE[self.qtype]
        q = self.rng.integers(lo, hi + 1, size=tuple(shape))
        s, z = p.arrays(len(shape), self.qtype)
        if self.io == "int":
            name = self.tensor(q.astype(self.qtype), constant=False, stem="x")
        else:
            x = (q - z + self.rng.uniform(-0.3, 0.3, q.shape)) * s.astype(np.float64)
            name = self.q(self.tensor(x.astype(np.float32), constant=False, stem="x"), p,
                          len(shape))
        return self.dq(name, s, z, self.qtype, len(shape))

    def sink(self, y: str, p: QParams, rank: int) -> None:
        """quantizeLinear of an operator's result, the graph output (dequantized again for
        "float" I/O)."""
        out = self.q(y, p, rank)
        if self.io == "float":
            out = self.dq(out, *p.arrays(rank, self.qtype), self.qtype, rank)
        self.outputs.append((out, p))


__all__ = ["RANGE", "CaseGraph", "QParams", "params"]
