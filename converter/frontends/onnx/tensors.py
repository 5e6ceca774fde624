"""ONNX tensors and attributes as numpy values: element types, initializers (inline, external
data confined to the model's folder, sparse ones densified after their indices are checked),
attribute values with the schema defaults filled in."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from converter.core.confine import check_relative, confined
from converter.core.errors import InvalidModel, exception_text, quoted
from converter.core.files import array_at, open_regular, read_at
from converter.frontends.onnx.nodecheck import schema_of
from op_mappings.onnx._element_types import ONNX_DTYPES, elem_type_name


def onnx_elem_type(dtype: str) -> int:
    """numpy-style dtype name -> ONNX element type (inverse of
    `op_mappings.onnx._element_types.elem_type_name`)."""
    for key, name in ONNX_DTYPES.items():
        if name == dtype:
            return key
    raise KeyError(dtype)


# -- tensors and external data --------------------------------------------------------------


def tensor_to_array(tensor: TensorProto, base_dir: Path | None, label: str) -> np.ndarray:
    """A TensorProto as a numpy array (external data resolved safely inside base_dir)."""
    if tensor.data_location != TensorProto.EXTERNAL:
        try:
            return numpy_helper.to_array(tensor)
        except Exception as exc:  # noqa: BLE001 - onnx raises assorted types here
            raise InvalidModel(f"{label}: tensor {tensor.name!r} cannot be decoded: "
                               f"{exc}") from exc
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    if base_dir is None:
        raise InvalidModel(f"tensor {tensor.name!r} stores its data in external file "
                           f"{location!r}, but the model was given in memory: pass the model "
                           "file path so the data can be found next to it")
    path = safe_external_path(base_dir, location, tensor.name)
    try:
        return _external_array(tensor, info, path, location)
    except OSError as exc:
        raise InvalidModel(f"tensor {quoted(tensor.name)}: external data file "
                           f"{quoted(location)} cannot be read ({exception_text(exc)})"
                           ) from None


def _external_array(tensor: TensorProto, info: Mapping[str, str], path: Path,
                    location: str) -> np.ndarray:
    """The value of `tensor` from its external data file `path` (inside the model's folder),
    read into memory (`converter.core.files`: a regular file only, never memory-mapped, so a file
    truncated meanwhile is an OSError naming it, never a SIGBUS)."""
    with open_regular(path, "the external data file") as fh:
        return _external_from(tensor, info, fh, path, location)


def _external_from(tensor: TensorProto, info: Mapping[str, str], fh: BinaryIO, path: Path,
                   location: str) -> np.ndarray:
    offset = _external_int(info, "offset", tensor.name)
    size = os.fstat(fh.fileno()).st_size
    length = _external_int(info, "length", tensor.name) if info.get("length") else size - offset
    if offset < 0 or length < 0 or offset + length > size:
        raise InvalidModel(f"tensor {tensor.name!r}: external data range offset={offset} "
                           f"length={length} lies outside {location!r} ({size} bytes)")
    dtype = elem_type_name(tensor.data_type)
    shape = tuple(int(d) for d in tensor.dims)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype in ("float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8",
                 "uint16", "uint32", "uint64", "bool"):
        np_dtype = np.dtype(dtype).newbyteorder("<")
        if count * np_dtype.itemsize != length:
            raise InvalidModel(f"tensor {tensor.name!r}: external data has {length} bytes, "
                               f"{list(shape)} {dtype} needs {count * np_dtype.itemsize}")
        if count == 0:
            return np.zeros(shape, dtype)
        arr = array_at(fh, offset, np_dtype, shape, path, "the external data file")
        return arr if np_dtype.isnative else arr.astype(dtype)
    raw = bytes(read_at(fh, offset, length, path, "the external data file"))
    copy = TensorProto()
    copy.CopyFrom(tensor)
    del copy.external_data[:]
    copy.data_location = TensorProto.DEFAULT
    copy.raw_data = raw
    try:
        return numpy_helper.to_array(copy)
    except Exception as exc:  # noqa: BLE001 - onnx raises assorted types here
        raise InvalidModel(f"tensor {quoted(tensor.name)}: external data cannot be decoded: "
                           f"{exception_text(exc)}") from exc


def _external_int(info: Mapping[str, str], key: str, tensor_name: str) -> int:
    """The `offset` / `length` entry of a tensor's external data (0 when absent), which must
    be a whole number written in decimal digits; InvalidModel otherwise."""
    text = (info.get(key, "") or "0").strip()
    if not (text.isascii() and text.isdigit()):
        raise InvalidModel(f"tensor {quoted(tensor_name)}: external data {key} {text!r} is "
                           "not a whole number of bytes")
    return int(text)


def safe_external_path(base_dir: Path, location: str, tensor_name: str) -> Path:
    """The file `location` names, guaranteed to lie inside base_dir or a folder allowed by
    `converter.core.confine.allowed_roots` (no absolute paths, no `..`, no symlink leaving the
    folder); `PathOutsideFolder` (an InvalidModel) or InvalidModel otherwise."""
    if not location:
        raise InvalidModel(f"tensor {quoted(tensor_name)} has external data without a "
                           "location")
    what = f"tensor {quoted(tensor_name)}: external data location"
    if "\0" in location:
        raise InvalidModel(f"{what} {quoted(location)} contains a NUL character, which no "
                           "file name can hold")
    check_relative(location, what)
    try:
        target = confined(base_dir / location, base_dir, what, location)
        found = target.exists()  # not a regular file: its reader says what it is
    except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop, ...
        raise InvalidModel(f"tensor {quoted(tensor_name)}: external data file "
                           f"{quoted(location)} cannot be opened ({exception_text(exc)})"
                           ) from None
    if not found:
        raise InvalidModel(f"tensor {quoted(tensor_name)}: external data file "
                           f"{quoted(location)} does not exist in {quoted(str(base_dir))}")
    return target


def _sparse_to_array(sparse: onnx.SparseTensorProto, base_dir: Path | None,
                     label: str) -> np.ndarray:
    from converter.core.budgets import active, nbytes

    values = tensor_to_array(sparse.values, base_dir, label)
    shape = tuple(int(d) for d in sparse.dims)
    # densifying allocates the whole tensor: check it against the budget first
    active().check("max_constant_bytes", nbytes(shape, values.dtype.itemsize),
                   f"{label}: the sparse tensor {sparse.values.name!r} would densify to")
    indices = tensor_to_array(sparse.indices, base_dir, label)
    _check_sparse(sparse.values.name, shape, values, indices, label)
    indices = indices.astype(np.int64)
    dense = np.zeros(shape, values.dtype)
    if indices.ndim == 1:
        dense.reshape(-1)[indices] = values
    else:
        dense[tuple(indices.T)] = values
    return dense


def _check_sparse(name: str, shape: tuple[int, ...], values: np.ndarray, indices: np.ndarray,
                  label: str) -> None:
    """InvalidModel unless `values` ([NNZ]) and `indices` ([NNZ] linear positions or
    [NNZ, rank] coordinates, integers) describe entries inside a tensor of `shape` (the
    ONNX SparseTensorProto rules)."""
    what = f"{label}: sparse tensor {quoted(name)}"
    if any(d < 0 for d in shape):
        raise InvalidModel(f"{what} has a negative dimension in {list(shape)}")
    if values.ndim != 1:
        raise InvalidModel(f"{what}: values must be 1-D, they have shape {list(values.shape)}")
    nnz = values.shape[0]
    if indices.dtype.kind not in "iu":
        raise InvalidModel(f"{what}: indices must be integers, they are {indices.dtype}")
    if indices.ndim == 1:
        bounds = np.asarray([int(np.prod(shape, dtype=np.int64))])
        coords = indices.reshape(-1, 1)
    elif indices.ndim == 2 and indices.shape[1] == len(shape):
        bounds = np.asarray(shape, np.int64)
        coords = indices
    else:
        raise InvalidModel(f"{what}: indices of shape {list(indices.shape)} fit neither "
                           f"[{nnz}] nor [{nnz}, {len(shape)}]")
    if coords.shape[0] != nnz:
        raise InvalidModel(f"{what} has {nnz} values but {coords.shape[0]} indices")
    if nnz and (np.any(coords < 0) or np.any(coords >= bounds)):
        raise InvalidModel(f"{what}: an index lies outside the shape {list(shape)}")


# -- attributes ---------------------------------------------------------------------------


def node_attributes(node: onnx.NodeProto, version: int, domain: str,
                    base_dir: Path | None = None, label: str = "") -> dict[str, Any]:
    """The node's attributes as Python values, with schema defaults filled in."""
    attrs = {a.name: attribute_value(a, base_dir, label) for a in node.attribute}
    for name, default in _schema_defaults(node.op_type, version, domain):
        if name not in attrs:
            attrs[name] = attribute_value(default, base_dir, label)
    return attrs


@lru_cache(maxsize=4096)
def _schema_defaults(op_type: str, version: int, domain: str
                     ) -> tuple[tuple[str, AttributeProto], ...]:
    """The (name, default value) of every attribute with a default in the op's schema at
    that opset (none when onnx has no schema: contrib domains, functions). Cached: a
    schema lookup that fails costs onnx tens of microseconds (a C++ exception)."""
    schema = schema_of(op_type, version, domain)
    if schema is None:
        return ()
    return tuple((name, spec.default_value) for name, spec in schema.attributes.items()
                 if spec.default_value.type != AttributeProto.UNDEFINED)


_INT, _FLOAT, _INTS, _FLOATS, _STRING = (int(AttributeProto.INT), int(AttributeProto.FLOAT),
                                         int(AttributeProto.INTS), int(AttributeProto.FLOATS),
                                         int(AttributeProto.STRING))


def attribute_value(attr: AttributeProto, base_dir: Path | None = None,
                    label: str = "") -> Any:
    """An AttributeProto as a Python value: int, float, str, numpy array, tuple of those,
    or the raw proto for graphs and type protos."""
    if attr.ref_attr_name:
        raise InvalidModel(f"attribute {quoted(attr.name)} refers to attribute "
                           f"{quoted(attr.ref_attr_name)} of a function, but it is not inside "
                           "a function body")
    kind = attr.type
    # the common kinds first, read directly (what helper.get_attribute_value gives, without
    # its chain of type comparisons)
    if kind == _INT:
        return attr.i
    if kind == _FLOAT:
        return attr.f
    if kind == _INTS:
        return tuple(attr.ints)
    if kind == _FLOATS:
        return tuple(attr.floats)
    if kind == _STRING:
        return attr.s.decode("utf-8", errors="replace")
    if kind == AttributeProto.TENSOR:
        return tensor_to_array(attr.t, base_dir, label)
    if kind == AttributeProto.TENSORS:
        return tuple(tensor_to_array(t, base_dir, label) for t in attr.tensors)
    if kind == AttributeProto.SPARSE_TENSOR:
        return _sparse_to_array(attr.sparse_tensor, base_dir, label)
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return tuple(v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v
                     for v in value)
    return value
