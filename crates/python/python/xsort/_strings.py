"""The stable order of variable-length strings by xsort's record sorter, as Python compares str.

Python compares str by code point, which is the order of their UTF-8 bytes, so the strings are
sorted as UTF-8 (one buffer and int64 offsets: ``Utf8``). One fixed width as wide as the longest
string would waste memory and time on columns of mostly short strings, so the sort goes in rounds
of fixed-width records (``_xsort.string_windows``): the first round sorts every string by a window
of its first bytes plus how many bytes it has beyond the window's start (capped at the width + 1:
a string that ends sorts before any string that extends it, even by NUL bytes); the rows whose
windows tie and whose strings go on take part in the next round, grouped by their tie, with the
next window of their bytes. Each round is a stable sort, so ties keep their input order, and rows
whose strings are equal end together, which gives their dense rank.
"""

from typing import NamedTuple, Optional, Tuple

import numpy as np

from xsort import _xsort


class Utf8(NamedTuple):
    """Strings as UTF-8: ``data`` (uint8) holds string i at ``offsets[i]:offsets[i + 1]`` (int64)."""

    data: np.ndarray
    offsets: np.ndarray


def utf8_of_objects(objects: np.ndarray) -> Utf8:
    """The UTF-8 of a numpy object array of str (TypeError naming the first other object)."""
    data, offsets = _xsort.utf8_of_objects(np.ascontiguousarray(objects, dtype=object))
    return Utf8(np.frombuffer(data, np.uint8), np.frombuffer(offsets, np.int64))


def utf8_of_arrow(capsule: object) -> Tuple[Utf8, np.ndarray]:
    """The UTF-8 of an Arrow stream of strings (an ``__arrow_c_stream__`` capsule), and its null
    mask (bool; a null's string is empty)."""
    data, offsets, nulls = _xsort.strings_of_arrow(capsule)
    return Utf8(np.frombuffer(data, np.uint8), np.frombuffer(offsets, np.int64)), np.frombuffer(nulls, np.bool_)


# The window widths of the rounds after the first, whose records start with an 8-byte group: each
# makes group + window + length byte a multiple of 8, and the length byte caps at 255.
_LATER_WIDTHS = (15, 31, 63, 127, 247)


def _first_width(offsets: np.ndarray) -> int:
    """The first round's window: as wide as most strings (7, 15 or 23 bytes, so that the window and
    its length byte fill whole words), judged on a sample of their lengths."""
    sample = np.arange(0, len(offsets) - 1, max(1, (len(offsets) - 1) // 4096))
    lengths = offsets[sample + 1] - offsets[sample]
    typical = float(np.quantile(lengths, 0.9)) if len(lengths) else 0.0
    return 7 if typical <= 7 else 15 if typical <= 15 else 23


def _words_equal_to_previous(records: np.ndarray, size: int) -> np.ndarray:
    """For each of the sorted ``records`` of ``size`` bytes, whether its key words (all but the
    last 8 bytes, which hold the row) equal the previous record's."""
    words = records.view(np.uint64).reshape(-1, size // 8)
    equal = np.zeros(len(words), dtype=bool)
    if len(words) > 1:
        equal[1:] = words[1:, 0] == words[:-1, 0]
        for column in range(1, size // 8 - 1):
            equal[1:] &= words[1:, column] == words[:-1, column]
    return equal


def sorted_strings(strings: Utf8, threads: Optional[int]) -> Tuple[np.ndarray, np.ndarray]:
    """The stable ascending order of the strings (int64 rows) and, for each sorted position,
    whether its string differs from the one before (the first: True)."""
    n = len(strings.offsets) - 1
    order = np.empty(n, dtype=np.int64)
    distinct = np.ones(n, dtype=bool)
    rows: Optional[np.ndarray] = None  # None: every row, in input order
    groups: Optional[np.ndarray] = None
    positions: Optional[np.ndarray] = None  # the sorted positions the round's rows fill
    start, width, later = 0, _first_width(strings.offsets), iter(_LATER_WIDTHS)
    while n:
        group_bytes = 0 if groups is None else 8
        size = -(-(group_bytes + width + 1) // 8) * 8 + 8
        count = n if rows is None else len(rows)
        records = np.empty(count * size, dtype=np.uint8)
        _xsort.string_windows(strings.data, strings.offsets, rows, groups, start, width, records, size)
        ordered = np.empty_like(records)
        _xsort.sort_records(records, ordered, size, [f"0:{group_bytes + width + 1}"], threads)
        sorted_rows = ordered.view(np.int64)[size // 8 - 1 :: size // 8]
        equal = _words_equal_to_previous(ordered, size)
        undecided = equal & (ordered[group_bytes + width :: size] == width + 1)
        where = slice(None) if positions is None else positions
        order[where] = sorted_rows
        distinct[where] = ~equal
        # A tie of windows whose strings go on: its first row and the rows tied to it go on.
        going_on = undecided.copy()
        going_on[:-1] |= undecided[1:]
        if not going_on.any():
            break
        kept = np.flatnonzero(going_on)
        groups = np.cumsum(~undecided[kept])
        rows = sorted_rows[kept]
        positions = kept if positions is None else positions[kept]
        start += width
        width = next(later, _LATER_WIDTHS[-1])
    return order, distinct


def dense_ranks(order: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """Each row's rank among the distinct strings (0 for the least), from ``sorted_strings``."""
    ranks_in_order = np.cumsum(distinct, dtype=np.int64) - 1
    dtype = np.uint32 if len(order) < 1 << 32 else np.uint64
    ranks = np.empty(len(order), dtype=dtype)
    ranks[order] = ranks_in_order
    return ranks


def descending_order(order: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """The stable descending order from the ascending one: the groups of equal strings in reverse,
    each keeping its rows in input order."""
    n = len(order)
    group_starts = np.flatnonzero(distinct)
    group_ends = np.append(group_starts[1:], n)
    group = np.cumsum(distinct) - 1
    # Position p of group g (from its start s to its end e) moves to n - e + (p - s).
    new_positions = n - group_ends[group] + np.arange(n) - group_starts[group]
    out = np.empty(n, dtype=np.int64)
    out[new_positions] = order
    return out
