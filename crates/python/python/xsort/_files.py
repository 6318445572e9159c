"""Sorting files and streams: ``sort_file`` and ``Sorter``."""

import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

import numpy as np

from xsort import _xsort

__all__ = ["sort_file", "Sorter"]

PathLike = Union[str, "os.PathLike[str]"]


def _strings(value, what: str) -> Optional[List[str]]:
    """None, one str, or a sequence of str, as a list."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{what} must be a str or a list of str, not {type(value).__name__}") from None
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{what} must be a str or a list of str, not a list holding {type(item).__name__}")
    return items


def _paths(value, what: str) -> List[str]:
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    try:
        return [os.fsdecode(os.fspath(p)) for p in value]
    except TypeError:
        raise TypeError(f"{what} must be a path or a list of paths, not {type(value).__name__}") from None


def _positive(value, what: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{what} must be positive, not {value}")
    return value


def _csv(csv) -> Optional[str]:
    """The separator of ``csv=``: True is a comma, False or None plain lines."""
    if csv is None or csv is False:
        return None
    if csv is True:
        return ","
    if isinstance(csv, str):
        return csv
    raise TypeError(f"csv must be True, False or a separator str, not {type(csv).__name__}")


def _locale(locale) -> Optional[str]:
    """The locale of ``locale=``: None the C locale, "" the environment's, else its name."""
    if locale is None or isinstance(locale, str):
        return locale
    raise TypeError(f"locale must be a locale's name, '' or None, not {type(locale).__name__}")


def _compress_temp(compress_temp) -> Optional[int]:
    """The level of ``compress_temp=``: None when the temp space is short, False never (0), True
    zstd's level 1, or a level from 1 to 19."""
    if compress_temp is None:
        return None
    if isinstance(compress_temp, bool):
        return int(compress_temp)
    if not isinstance(compress_temp, int) or not 1 <= compress_temp <= 19:
        raise ValueError(f"compress_temp must be None, a bool or a zstd level from 1 to 19, not {compress_temp!r}")
    return compress_temp


def _header(header) -> int:
    """The records of ``header=``: True is one, False none."""
    if isinstance(header, bool):
        return int(header)
    if not isinstance(header, int) or header < 0:
        raise ValueError(f"header must be a bool or a count of records, not {header!r}")
    return header


def sort_file(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, *, record_size: Optional[int] = None, keys: Union[None, str, Sequence[str]] = None, args: Union[None, str, Sequence[str]] = None, memory: Optional[int] = None, temp_dirs: Union[None, PathLike, Sequence[PathLike]] = None, threads: Optional[int] = None, sync: bool = False, compress: Optional[str] = None, decompress: bool = True, csv: Union[bool, str] = False, header: Union[bool, int] = False, jsonl: bool = False, locale: Optional[str] = None, compress_temp: Union[None, bool, int] = None) -> Dict[str, Any]:
    """Sorts the files ``inputs`` (one path or a list, read in order) into the file ``output``;
    returns the statistics (the ``xsort --stats-json`` content) as a dict.

    Records of ``record_size`` bytes when given, sorted by ``keys``: ``--key-bytes`` strings
    (``"0:10"``, ``"8:8:i64le:r"``; the whole record without keys). Text lines otherwise,
    ordered by ``args``: GNU sort's ordering options (``["-t,", "-k2,2n"]``), as ``sort``
    takes them under ``LC_ALL=C``, or in ``locale`` when given: a locale's name
    (``"en_US.UTF-8"``: its collation, decimal point and month names, as GNU sort orders there) or
    ``""`` for the one the environment names, as GNU sort reads it (``LC_ALL``, ``LC_COLLATE``
    and the other categories' variables, ``LANG``). Past ``memory`` bytes (default: half the memory the process may use, within its memory cgroup)
    the sort spills sorted runs to ``temp_dirs`` (default: the system's temp directory) and
    merges them. ``sync`` makes the output durable before returning.

    Inputs compressed with gzip, zstd, bzip2 or xz are recognised by their first bytes and
    decompressed as they are read (``decompress=False`` reads them as they are). The output is
    compressed as its name says (``.gz``, ``.zst``, ``.bz2``, ``.xz``), or as ``compress`` says:
    ``"gzip"``, ``"zstd:19"`` (a format and an optional level), or ``"none"``. Temp runs are
    stored zstd-compressed when ``compress_temp`` is True (or a level from 1 to 19), never when
    it is False, and by default only when the temp directories' free space would not hold them
    plainly (the statistics' ``temp_compression`` says so).

    ``csv=True`` (or a separator: ``csv="\\t"``, ``csv=";"``) reads the lines as CSV records
    (RFC 4180: quoted fields may hold separators, doubled quotes and newlines); ``header=True``
    (or a count) keeps each input's first records as its header, written first. For lines,
    ``keys`` are GNU KEYDEFs or, with a header, column names with ordering letters:
    ``sort_file("in.csv", "out.csv", csv=True, header=True, keys=["price:n"])``. ``jsonl=True``
    reads JSON lines, ``keys`` then paths into their values: ``keys=[".user.age", ".name:r"]``.

    The output is written beside its target and put in place only when complete: a failed or
    interrupted sort (Ctrl-C: KeyboardInterrupt) leaves it as it was, and leaves no temp file.
    The GIL is released while sorting.
    """
    stats = _xsort.sort_file(
        _paths(inputs, "inputs"),
        os.fsdecode(os.fspath(output)),
        record_size=_positive(record_size, "record_size"),
        keys=_strings(keys, "keys"),
        args=_strings(args, "args"),
        memory=_positive(memory, "memory"),
        temp_dirs=None if temp_dirs is None else _paths(temp_dirs, "temp_dirs"),
        threads=_positive(threads, "threads"),
        sync=bool(sync),
        compress=None if compress is None else str(compress),
        decompress=bool(decompress),
        csv=_csv(csv),
        header=_header(header),
        jsonl=bool(jsonl),
        locale=_locale(locale),
        compress_temp=_compress_temp(compress_temp),
    )
    return json.loads(stats)


def _bytes_view(buffer, what: str) -> np.ndarray:
    """The bytes of a bytes-like object (or C-contiguous array), as a uint8 array on its memory."""
    if isinstance(buffer, str):
        raise TypeError(f"{what} takes a bytes-like object, not str")
    if isinstance(buffer, np.ndarray):
        if not buffer.flags.c_contiguous:
            raise ValueError(f"{what} takes a C-contiguous array")
        return buffer.reshape(-1).view(np.uint8)
    try:
        return np.frombuffer(buffer, dtype=np.uint8)
    except TypeError:
        raise TypeError(f"{what} takes a bytes-like object, not {type(buffer).__name__}") from None
    except (ValueError, BufferError) as e:
        raise ValueError(f"{what} takes a contiguous buffer: {e}") from None


class Sorter:
    """A streaming sort: give it records (or lines) in any chunking with ``release``, call
    ``finish``, then iterate it for sorted chunks (``bytes``) or fill buffers with
    ``read_into``. Past its ``memory`` budget it spills sorted runs to ``temp_dirs`` and merges
    them, as the ``xsort`` command does.

    ``Sorter(record_size=100, keys=["0:10"])`` sorts records; ``Sorter(args=["-k2,2n"])`` (or
    ``Sorter()``) text lines; ``Sorter(spec="-format=size:100 -key=...")`` whatever Nsort
    statements describe; ``csv=True, header=True, keys=["price:n"]`` CSV records by a column,
    ``jsonl=True, keys=[".user.age"]`` JSON lines, ``locale="en_US.UTF-8"`` lines in a locale's order (see ``sort_file``). As a context manager it closes on exit; closing (or dropping) an
    unfinished sorter cancels its sort and removes its temp files. Ctrl-C during ``release`` or
    a read raises KeyboardInterrupt and cancels the sort. ``expected_bytes``, the input's length
    when known, lets the sort plan its memory for that much rather than for its whole budget.
    ``compress_temp`` stores its temp runs zstd-compressed, as in ``sort_file``.
    """

    def __init__(self, record_size: Optional[int] = None, keys: Union[None, str, Sequence[str]] = None, *, args: Union[None, str, Sequence[str]] = None, spec: Optional[str] = None, memory: Optional[int] = None, temp_dirs: Union[None, PathLike, Sequence[PathLike]] = None, threads: Optional[int] = None, expected_bytes: Optional[int] = None, csv: Union[bool, str] = False, header: Union[bool, int] = False, jsonl: bool = False, locale: Optional[str] = None, compress_temp: Union[None, bool, int] = None) -> None:
        if spec is not None and not isinstance(spec, str):
            raise TypeError(f"spec must be a str, not {type(spec).__name__}")
        self._session = _xsort.Session(
            record_size=_positive(record_size, "record_size"),
            keys=_strings(keys, "keys"),
            args=_strings(args, "args"),
            spec=spec,
            memory=_positive(memory, "memory"),
            temp_dirs=None if temp_dirs is None else _paths(temp_dirs, "temp_dirs"),
            threads=_positive(threads, "threads"),
            expected_bytes=_positive(expected_bytes, "expected_bytes"),
            csv=_csv(csv),
            header=_header(header),
            jsonl=bool(jsonl),
            locale=_locale(locale),
            compress_temp=_compress_temp(compress_temp),
        )

    @property
    def record_size(self) -> Optional[int]:
        """Bytes per record; None for lines."""
        return self._session.record_size

    def release(self, buffer) -> None:
        """Gives the bytes of ``buffer`` (bytes, bytearray, memoryview, a numpy array...) to the
        sort. Records and lines may straddle calls; the sort copies what it keeps."""
        self._session.push(_bytes_view(buffer, "release"))

    def finish(self) -> None:
        """Ends the input; the sorted output can then be read. Calling it again does nothing."""
        self._session.finish()

    def read_into(self, buffer) -> int:
        """Fills the writable ``buffer`` with sorted output (whole records only) and returns the
        bytes given; 0 at the end of the output."""
        view = _bytes_view(buffer, "read_into")
        if not view.flags.writeable:
            raise TypeError("read_into takes a writable buffer")
        return self._session.pull_into(view)

    def __iter__(self) -> Iterator[bytes]:
        """The sorted output, in chunks of whole records (or of lines' bytes)."""
        while True:
            chunk = self._session.pull()
            if chunk is None:
                return
            yield chunk

    def stats(self) -> Optional[Dict[str, Any]]:
        """The statistics (as ``sort_file`` returns them) once all the output was read, else None."""
        stats = self._session.stats()
        return None if stats is None else json.loads(stats)

    def close(self) -> None:
        """Ends the sorter; an unfinished sort is cancelled and its temp files removed."""
        self._session.close()

    def __enter__(self) -> "Sorter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
