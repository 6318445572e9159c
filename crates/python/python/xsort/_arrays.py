"""Sorting numpy arrays: ``sort_array`` and ``argsort``.

A 1-D array is a sequence of fixed-size records (its itemsize); the fields named in ``order``
become xsort keys at the fields' offsets, typed as numpy compares them: ``S`` bytes as bytes,
integers and floats by value in their byte order, booleans as bytes, and fixed-width unicode ``U``
as one unsigned 32-bit key per character (numpy compares code points). xsort's float keys order
``-0.0`` before ``+0.0``, numpy holds them equal: an array whose float keys hold a ``-0.0`` is
sorted by a copy of its keys with every ``-0.0`` made ``+0.0``.
"""

import sys
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from xsort import _xsort

__all__ = ["sort_array", "argsort"]

Order = Union[None, str, Sequence[str]]
Descending = Union[bool, Sequence[bool]]

_NATIVE = "le" if sys.byteorder == "little" else "be"
_SUPPORTED = "bytes (S), unicode (U), booleans, integers of 1, 2, 4 or 8 bytes, float32 and float64"


def _byte_order(dtype: np.dtype) -> str:
    return {"<": "le", ">": "be"}.get(dtype.byteorder, _NATIVE)


def _field_keys(name: Optional[str], dtype: np.dtype, offset: int, descending: bool) -> List[str]:
    """The ``--key-bytes`` keys of one field."""
    r = ":r" if descending else ""
    what = "the array" if name is None else f"field {name!r}"
    kind, size = dtype.kind, dtype.itemsize
    if dtype.fields is not None or dtype.subdtype is not None:
        raise TypeError(f"xsort cannot sort by {what}: it is a structured or sub-array field, not a value")
    if kind == "S":
        return [f"{offset}:{size}:char{r}"] if size else []
    if kind == "U":
        # UCS-4 code units: each an unsigned 32-bit number in the array's byte order.
        u32 = f"u32{_byte_order(dtype)}"
        return [f"{offset + 4 * i}:4:{u32}{r}" for i in range(size // 4)]
    if kind == "b":
        return [f"{offset}:1:u8{r}"]
    if kind in "ui" and size in (1, 2, 4, 8):
        sign = "u" if kind == "u" else "i"
        return [f"{offset}:1:{sign}8{r}"] if size == 1 else [f"{offset}:{size}:{sign}{8 * size}{_byte_order(dtype)}{r}"]
    if kind == "f" and size in (4, 8):
        return [f"{offset}:{size}:f{8 * size}{_byte_order(dtype)}{r}"]
    raise TypeError(f"xsort cannot sort by {what} of type {dtype} (numpy dtype {dtype.str!r}): it sorts {_SUPPORTED}")


def _descending_flags(descending: Descending, n: int) -> List[bool]:
    if isinstance(descending, (bool, np.bool_)):
        return [bool(descending)] * n
    try:
        flags = list(descending)
    except TypeError:
        raise TypeError(f"descending must be a bool or a sequence of bools, not {type(descending).__name__}") from None
    if len(flags) != n or not all(isinstance(f, (bool, np.bool_)) for f in flags):
        raise ValueError(f"descending must be a bool or one bool per sorted field ({n}), not {descending!r}")
    return [bool(f) for f in flags]


def _fields(arr: np.ndarray, order: Order) -> List[Tuple[Optional[str], np.dtype, int]]:
    """The sort's fields: name (None for a plain array), dtype and offset."""
    fields = arr.dtype.fields
    if fields is None:
        if order is not None:
            raise ValueError(f"order names fields of a structured array; this array's dtype {arr.dtype} has none")
        return [(None, arr.dtype, 0)]
    names = arr.dtype.names if order is None else [order] if isinstance(order, str) else list(order)
    if not names:
        raise ValueError("order names no field")
    out = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"order must hold field names (str), not {type(name).__name__}")
        if name not in fields:
            raise ValueError(f"no field named {name!r} (the fields are {', '.join(arr.dtype.names)})")
        out.append((name, fields[name][0], fields[name][1]))
    return out


def _plan(arr, order: Order, descending: Descending, threads: Optional[int]):
    """The contiguous records, their keys, and the records to sort by when ``-0.0`` needs
    normalising (else None)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"xsort sorts numpy arrays, not {type(arr).__name__}")
    if arr.ndim != 1:
        raise ValueError(f"xsort sorts 1-D arrays, not {arr.ndim}-D ones")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int, not {threads!r}")
    fields = _fields(arr, order)
    flags = _descending_flags(descending, len(fields))
    keys = [k for (name, dtype, offset), d in zip(fields, flags) for k in _field_keys(name, dtype, offset, d)]
    # A contiguous copy of a strided array (a column of a 2-D array, a step slice, a field view):
    # the sort reads records at fixed intervals of their itemsize.
    records = np.ascontiguousarray(arr)
    by = None
    for name, dtype, _ in fields:
        if dtype.kind != "f":
            continue
        column = records if name is None else records[name]
        negative_zero = (column == 0) & np.signbit(column)
        if negative_zero.any():
            if by is None:
                by = records.copy()
            (by if name is None else by[name])[negative_zero] = 0.0
    return records, keys, by


def sort_array(
    arr: np.ndarray,
    order: Order = None,
    *,
    descending: Descending = False,
    memory: Optional[int] = None,
    threads: Optional[int] = None,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """A stably sorted copy of the 1-D numpy array ``arr``.

    A structured array is sorted by the fields named in ``order`` (a name or a list of names;
    all fields in order when None), a plain array by its values. Field types: bytes ``S``,
    signed and unsigned integers of 1, 2, 4 or 8 bytes in either byte order, booleans,
    float32 and float64 (NaN last, as numpy sorts it; ``-0.0`` equal to ``+0.0``), and
    fixed-width unicode ``U`` (by code point, as numpy compares it).

    ``descending`` is one bool, or one per field of ``order``: a descending field's order is
    reversed (NaN first), and records with equal keys keep their input order. The result is
    byte for byte ``arr[np.lexsort([arr[f] for f in reversed(order)])]`` with descending
    fields' order reversed. Unlike ``np.sort(order=...)``, fields not named in ``order`` are not
    compared: records equal in the named fields keep their input order.

    ``arr`` is read where it lies when C-contiguous; a strided array is copied first. The sort
    runs on ``threads`` threads (default: one per CPU) without the GIL, and Ctrl-C stops it
    within a fraction of a second (KeyboardInterrupt). With ``memory`` (bytes), a sort that needs more than that
    beyond the input and output arrays (up to 32 bytes per record) goes through the streaming
    sorter within the budget, spilling sorted runs to the temp directory. Arrays whose float
    keys hold ``-0.0`` are sorted in memory whatever the budget.

    ``out``, as numpy's ``out=`` arguments: a C-contiguous, writable array of ``arr``'s length and
    dtype, not overlapping ``arr``, that receives the sorted records and is returned. Sorting into
    the same array again and again saves the first touch of a new array's memory on every call
    (a third of the time of a large in-memory sort on the development VM). If the sort fails or is
    interrupted, ``out`` holds unspecified contents.
    """
    records, keys, by = _plan(arr, order, descending, threads)
    if memory is not None and (not isinstance(memory, int) or memory < 1):
        raise ValueError(f"memory must be a positive number of bytes, not {memory!r}")
    n, size = len(records), records.dtype.itemsize
    out = np.empty(n, dtype=records.dtype) if out is None else _checked_out(out, arr, records)
    if n == 0 or size == 0:
        out[...] = records
        return out
    if by is not None:
        return np.take(records, _indices(by, keys, threads), out=out)
    if memory is not None and 32 * n > memory:
        from xsort._files import Sorter

        with Sorter(record_size=size, keys=keys, memory=memory, threads=threads, expected_bytes=records.nbytes) as sorter:
            sorter.release(records)
            sorter.finish()
            filled = 0
            flat = out.view(np.uint8)
            while filled < flat.size:
                got = sorter.read_into(flat[filled:])
                if got == 0:
                    break
                filled += got
        return out
    _xsort.sort_records(records.view(np.uint8), out.view(np.uint8), size, keys, threads)
    return out


def _checked_out(out: object, arr: np.ndarray, records: np.ndarray) -> np.ndarray:
    """``out`` when it can receive the sorted ``records`` (of ``arr``); a clear error otherwise."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, not {type(out).__name__}")
    if out.shape != records.shape or out.dtype != records.dtype:
        raise ValueError(f"out must have the shape {records.shape} and dtype {records.dtype} of the sorted array, not {out.shape} and {out.dtype}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be a C-contiguous, writable array")
    if np.may_share_memory(out, arr) or np.may_share_memory(out, records):
        raise ValueError("out must not overlap the array being sorted (sort into another array, or assign the result)")
    return out


def argsort(arr: np.ndarray, order: Order = None, *, descending: Descending = False, threads: Optional[int] = None) -> np.ndarray:
    """The stable sorting permutation of the 1-D array ``arr`` (int64): ``arr[argsort(arr, ...)]``
    is ``sort_array(arr, ...)``. Same keys, ``descending`` and threads as ``sort_array``."""
    records, keys, by = _plan(arr, order, descending, threads)
    return _indices(records if by is None else by, keys, threads)


def _indices(records: np.ndarray, keys: List[str], threads: Optional[int]) -> np.ndarray:
    n, size = len(records), records.dtype.itemsize
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    if size == 0:
        out[:] = np.arange(n)
        return out
    _xsort.sorted_indices(records.view(np.uint8), out.view(np.uint8), size, keys, threads)
    return out
