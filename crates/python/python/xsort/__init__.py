"""xsort: a fast sort for numpy record arrays, pandas and Polars DataFrames, files and streams.

Arrays (1-D numpy arrays, structured or plain; stable, by the named fields only)::

    xsort.sort_array(arr, order=["b", "a"], descending=[True, False])  # a sorted copy
    xsort.argsort(arr, order="key")                                     # the permutation (int64)

DataFrames and Series of pandas or Polars (stable, by the named columns; numbers, booleans,
datetimes and strings; missing values where the library puts them, or where ``nulls_last`` says)::

    xsort.sort(df, ["name", "score"], descending=[False, True])  # as df.sort_values / df.sort
    df.iloc[xsort.argsort(df, "score")]                            # pandas: the same rows

Files (fixed-size records by byte-range keys, or text lines by GNU sort's options)::

    xsort.sort_file("in.dat", "out.dat", record_size=100, keys=["0:10"])
    xsort.sort_file("in.csv", "out.csv", args=["-t,", "-k3,3", "-k1,1nr"])

Streams::

    with xsort.Sorter(record_size=100, keys=["0:10"], memory=1 << 30) as s:
        for chunk in chunks:
            s.release(chunk)
        s.finish()
        for sorted_chunk in s:
            ...

Every sort releases the GIL, takes buffers without copying where it can, spills to temp
directories past its memory budget, and answers Ctrl-C with KeyboardInterrupt. Errors are
``xsort.Error`` subclasses that are also ``ValueError`` (``InputError``, ``UsageError``) or
``OSError`` (``SortOSError``), worded as the ``xsort`` command words them. The package also
installs the ``xsort``, ``gensort`` and ``valsort`` commands (``python -m xsort --help``).
"""

from xsort._arrays import sort_array
from xsort._errors import Error, InputError, InternalError, SortOSError, UsageError
from xsort._files import Sorter, sort_file
from xsort._frames import argsort, sort
from xsort._xsort import __version__

__all__ = ["sort", "argsort", "sort_array", "sort_file", "Sorter", "Error", "InputError", "UsageError", "SortOSError", "InternalError", "__version__"]
