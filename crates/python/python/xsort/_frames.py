"""Sorting pandas and Polars DataFrames and Series by columns: what ``xsort.argsort`` and
``xsort.sort`` do with them.

Each sorted column is read as numbers (a numpy view where the library allows it: pandas' numeric
columns without missing values, Polars' numeric columns without nulls), or as strings in one UTF-8
buffer (``_strings``), plus a mask of its missing values. One column is sorted by itself (the
array sort for numbers, the string rounds for strings) and its missing values are put first or
last; several are copied into one packed record per row, each column a null flag (when it has
missing values) and a value (a string column: its dense rank), and sorted by the record sorter.

Missing values are the library's: pandas' NaN, None, NA and NaT (placed by ``na_position``, last by
default, whatever the direction), Polars' nulls (placed by ``nulls_last``, first by default).
Polars' NaN is a value, larger than all others, as Polars and xsort's float keys order it.
"""

from typing import Any, Hashable, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from xsort import _arrays, _strings
from xsort._errors import UsageError

__all__ = ["argsort", "sort"]

Flags = Union[bool, Sequence[bool]]

_SUPPORTED = "integers, floats, booleans, datetimes, timedeltas and strings"


class Column(NamedTuple):
    """One sorted column: its numbers, or its strings, and its missing values (None: none)."""

    name: Hashable
    values: Optional[np.ndarray]
    strings: Optional[_strings.Utf8]
    nulls: Optional[np.ndarray]


def library_of(obj: object) -> Optional[str]:
    """"pandas" or "polars" when ``obj`` is (a subclass of) one of their DataFrames or Series,
    judged by its type's module, so that neither library is imported to ask."""
    for cls in type(obj).__mro__:
        library = cls.__module__.split(".")[0]
        if library in ("pandas", "polars") and cls.__name__ in ("DataFrame", "Series"):
            return library
    return None


def _is_series(obj: object) -> bool:
    return any(cls.__name__ == "Series" for cls in type(obj).__mro__)


def _unsupported(name: Hashable, what: str) -> UsageError:
    return UsageError(f"xsort cannot sort by column {name!r} of type {what}: it sorts {_SUPPORTED}")


def _without_nulls(nulls: np.ndarray) -> Optional[np.ndarray]:
    return nulls if nulls.any() else None


def _numpy_column(name: Hashable, values: np.ndarray, nan_is_null: bool) -> Column:
    """A column from a numpy array (pandas' numpy-backed columns, Polars' numbers)."""
    kind, size = values.dtype.kind, values.dtype.itemsize
    if kind in "iub" and size <= 8:
        return Column(name, values, None, None)
    if kind == "f" and size <= 8:
        values = values.astype(np.float32) if size == 2 else values
        return Column(name, values, None, _without_nulls(np.isnan(values)) if nan_is_null else None)
    if kind in "mM":
        values = values.view(np.int64)
        return Column(name, values, None, _without_nulls(values == np.iinfo(np.int64).min))  # NaT
    if kind == "O":
        return _object_column(name, values)
    raise _unsupported(name, str(values.dtype))


def _object_column(name: Hashable, objects: np.ndarray) -> Column:
    """A column of str objects; None, NaN and pandas' NA are missing."""
    import pandas as pd

    nulls = _without_nulls(np.asarray(pd.isna(objects), dtype=bool))
    if nulls is not None:
        objects = objects.copy()
        objects[nulls] = ""
    try:
        strings = _strings.utf8_of_objects(objects)
    except (TypeError, UnicodeError) as e:
        raise UsageError(f"xsort cannot sort by column {name!r} of type object: {e} (it sorts object columns of str)") from None
    return Column(name, None, strings, nulls)


def _arrow_strings(name: Hashable, series: Any) -> Column:
    strings, nulls = _strings.utf8_of_arrow(series.__arrow_c_stream__())
    return Column(name, None, strings, _without_nulls(nulls))


def _pandas_column(name: Hashable, series: Any) -> Column:
    import pandas as pd

    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        return _numpy_column(name, series.to_numpy(), nan_is_null=True)
    if isinstance(dtype, pd.StringDtype):
        if dtype.storage == "pyarrow":
            return _arrow_strings(name, series)
        return _object_column(name, series.to_numpy(dtype=object))
    if isinstance(dtype, pd.DatetimeTZDtype):
        # The instants, as UTC: the wall times of a zone do not order them across its DST changes.
        return _numpy_column(name, series.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(), nan_is_null=True)
    if isinstance(series.array, (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)):
        nulls = np.asarray(series.isna(), dtype=bool)
        values = series.to_numpy(dtype=dtype.numpy_dtype, na_value=0)
        return _numpy_column(name, values, nan_is_null=True)._replace(nulls=_without_nulls(nulls))
    raise _unsupported(name, str(dtype))


def _polars_column(name: Hashable, series: Any) -> Column:
    import polars as pl

    dtype = series.dtype
    if dtype in (pl.String, pl.Binary):
        return _arrow_strings(name, series)
    numeric = dtype.is_numeric() or dtype == pl.Boolean
    if not (numeric or dtype.is_temporal()) or dtype.is_decimal():
        raise _unsupported(name, str(dtype))
    nulls = _without_nulls(series.is_null().to_numpy()) if series.null_count() else None
    physical = series if numeric else series.to_physical()  # dates, times, durations: integers
    if nulls is not None:
        physical = physical.fill_null(False if dtype == pl.Boolean else 0)
    return _numpy_column(name, physical.to_numpy(), nan_is_null=False)._replace(nulls=nulls)


def _names(obj: Any, library: str, by: object) -> List[Hashable]:
    """The names of the sorted columns (a Series: its own)."""
    if _is_series(obj):
        if by is not None:
            raise UsageError("a Series is sorted by its values: by must be None")
        return [obj.name]
    if by is None:
        raise UsageError("by must name the column (or the list of columns) to sort the DataFrame by")
    single = isinstance(by, str) or (library == "pandas" and not isinstance(by, (list, tuple)))
    names = [by] if single else list(by)  # type: ignore[call-overload]
    if not names:
        raise UsageError("by names no column")
    return names


def _columns(obj: Any, library: str, names: List[Hashable]) -> List[Column]:
    if _is_series(obj):
        return [(_pandas_column if library == "pandas" else _polars_column)(obj.name, obj)]
    out = []
    for name in names:
        if library == "polars" and not isinstance(name, str):
            raise UsageError(f"by must hold column names (str), not {type(name).__name__}")
        if name not in obj.columns:
            shown = ", ".join(repr(c) for c in list(obj.columns)[:20])
            raise UsageError(f"no column named {name!r} (the columns are {shown}{', ...' if len(obj.columns) > 20 else ''})")
        series = obj[name]
        if library == "pandas" and series.ndim != 1:
            raise UsageError(f"column name {name!r} is not unique: the DataFrame has {series.shape[1]} columns of that name")
        out.append((_pandas_column if library == "pandas" else _polars_column)(name, series))
    return out


def _flags(value: Flags, n: int, what: str) -> List[bool]:
    """One bool per sorted column from a bool or a sequence of them."""
    if isinstance(value, (bool, np.bool_)):
        return [bool(value)] * n
    try:
        flags = list(value)
    except TypeError:
        raise UsageError(f"{what} must be a bool or a sequence of bools, not {type(value).__name__}") from None
    if len(flags) != n or not all(isinstance(f, (bool, np.bool_)) for f in flags):
        raise UsageError(f"{what} must be a bool or one bool per sorted column ({n}), not {value!r}")
    return [bool(f) for f in flags]


def frame_order(obj: Any, library: str, by: object, descending: Flags, nulls_last: Optional[Flags], threads: Optional[int]) -> np.ndarray:
    """The stable order (int64 row positions) of the rows of a DataFrame or Series."""
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise UsageError(f"threads must be a positive int, not {threads!r}")
    names = _names(obj, library, by)
    flags = _flags(descending, len(names), "descending")
    last = _flags(library == "pandas" if nulls_last is None else nulls_last, len(names), "nulls_last")
    columns = _columns(obj, library, names)
    if len(columns) == 1:
        return _one_column_order(columns[0], flags[0], last[0], threads)
    return _records_order(columns, flags, last, threads)


def _values_order(column: Column, descending: bool, threads: Optional[int]) -> np.ndarray:
    """The stable order of a column's values, missing ones wherever their fill value falls."""
    if column.strings is not None:
        order, distinct = _strings.sorted_strings(column.strings, threads)
        return _strings.descending_order(order, distinct) if descending else order
    assert column.values is not None
    return _arrays.argsort(column.values, descending=descending, threads=threads)


def _one_column_order(column: Column, descending: bool, nulls_last: bool, threads: Optional[int]) -> np.ndarray:
    order = _values_order(column, descending, threads)
    if column.nulls is None:
        return order
    # The present rows in their sorted order, and the missing ones in input order before or after.
    present, missing = order[~column.nulls[order]], np.flatnonzero(column.nulls)
    return np.concatenate([present, missing] if nulls_last else [missing, present])


def _records_order(columns: List[Column], descending: List[bool], nulls_last: List[bool], threads: Optional[int]) -> np.ndarray:
    """The order of several columns: one packed record per row, sorted by the record sorter."""
    values = [_key_values(c, threads) for c in columns]
    fields = []
    for i, (column, value) in enumerate(zip(columns, values)):
        if column.nulls is not None:
            fields.append((f"null{i}", np.uint8))
        fields.append((f"value{i}", value.dtype))
    records = np.empty(len(values[0]), dtype=np.dtype(fields))
    keys: List[str] = []
    for i, (column, value) in enumerate(zip(columns, values)):
        if column.nulls is not None:
            # Ascending whatever the direction: 1 marks the rows that go after the others.
            records[f"null{i}"] = column.nulls if nulls_last[i] else ~column.nulls
            keys += _key(records, f"null{i}", False)
        field = records[f"value{i}"]
        field[...] = value
        if value.dtype.kind == "f":
            np.add(field, 0.0, out=field)  # -0.0 + 0.0 is +0.0: the libraries hold them equal
        if column.nulls is not None:
            field[column.nulls] = 0  # a missing value's fill (NaN, NaT) must not order the missing
        keys += _key(records, f"value{i}", descending[i])
    return _arrays._indices(records, keys, threads)


def _key_values(column: Column, threads: Optional[int]) -> np.ndarray:
    """The numbers a column is sorted by in a record: its values, or its strings' dense ranks."""
    if column.strings is not None:
        return _strings.dense_ranks(*_strings.sorted_strings(column.strings, threads))
    assert column.values is not None
    return column.values


def _key(records: np.ndarray, name: str, descending: bool) -> List[str]:
    dtype, offset = records.dtype.fields[name][:2]  # type: ignore[index]
    return _arrays._field_keys(name, dtype, offset, descending)


def take(obj: Any, library: str, order: np.ndarray) -> Any:
    """The rows of ``obj`` in ``order``: pandas carries the index labels along, as sort_values."""
    if library == "pandas":
        return obj.take(order)
    return obj.gather(order)


def argsort(
    obj: Any,
    by: object = None,
    *,
    descending: Flags = False,
    nulls_last: Optional[Flags] = None,
    threads: Optional[int] = None,
    order: object = None,
) -> np.ndarray:
    """The stable sorting permutation (int64 row positions) of a numpy array, or of a pandas or
    Polars DataFrame or Series.

    A DataFrame is sorted by the column ``by`` names, or the list of columns it names; a Series by
    its values (``by`` None). Column types: integers of any width, floats, booleans, datetimes and
    timedeltas (pandas; Polars' dates, times, datetimes and durations), and strings (pandas object
    columns of str, pandas' ``string``/``str`` dtypes, Polars' ``String``), compared as Python
    compares str (by code point). ``descending`` is one bool or one per column; rows equal in
    every sorted column keep their input order. ``df.iloc[argsort(df, by, ...)]`` (pandas) and
    ``df[argsort(df, by, ...)]`` (Polars) are ``sort(df, by, ...)``.

    ``nulls_last`` places the missing values (pandas: NaN, None, NA, NaT; Polars: nulls), whatever
    the direction: True after the others, False before them, None as the library does by default
    (pandas' ``na_position="last"``, Polars' ``nulls_last=False``); one bool or one per column.
    Polars' NaN is not missing: it is larger than any number, as Polars orders it. ``-0.0``
    equals ``+0.0``. The result equals pandas' ``sort_values(by, ascending=..., kind="stable",
    na_position=...)`` and Polars' ``sort(by, descending=..., nulls_last=..., maintain_order=True)``.

    A numpy array is sorted as ``sort_array`` sorts it: ``by`` (or ``order=``, its old name)
    names its fields, and ``nulls_last`` must be None. Errors in the arguments (a column that
    does not exist, a type xsort does not sort, a ``descending`` of the wrong length) raise
    ``xsort.UsageError`` naming the column.
    """
    library = library_of(obj)
    if library is None:
        return _arrays.argsort(obj, _array_order(by, order, nulls_last), descending=descending, threads=threads)
    if order is not None:
        raise UsageError("order= names the fields of a numpy array: a DataFrame's columns are named by by=")
    return frame_order(obj, library, by, descending, nulls_last, threads)


def sort(
    obj: Any,
    by: object = None,
    *,
    descending: Flags = False,
    nulls_last: Optional[Flags] = None,
    threads: Optional[int] = None,
    order: object = None,
    memory: Optional[int] = None,
    out: Optional[np.ndarray] = None,
) -> Any:
    """A sorted copy of a numpy array, or of a pandas or Polars DataFrame or Series: the same kind
    of object with its rows in the order ``argsort`` gives (its arguments are ``argsort``'s).

    pandas' rows keep their index labels, as ``sort_values`` keeps them; the result equals
    ``df.sort_values(by, ascending=..., kind="stable")`` and Polars'
    ``df.sort(by, descending=..., maintain_order=True)``. A numpy array gives ``sort_array``'s
    result, ``memory`` and ``out`` included (they apply to numpy arrays only).
    """
    library = library_of(obj)
    if library is None:
        fields = _array_order(by, order, nulls_last)
        return _arrays.sort_array(obj, fields, descending=descending, threads=threads, memory=memory, out=out)
    if memory is not None or out is not None:
        raise UsageError("memory= and out= apply to numpy arrays, not to DataFrames")
    return take(obj, library, argsort(obj, by, descending=descending, nulls_last=nulls_last, threads=threads, order=order))


def _array_order(by: object, order: object, nulls_last: Optional[Flags]) -> Any:
    """The fields of a numpy array's sort, named by ``by`` or by ``order``."""
    if by is not None and order is not None:
        raise UsageError("by and order name the same thing: give one of them")
    if nulls_last is not None:
        raise UsageError("nulls_last applies to DataFrames: numpy arrays have no missing values")
    return order if by is None else by
