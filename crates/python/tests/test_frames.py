"""argsort and sort of pandas and Polars DataFrames and Series against the libraries' own stable
sorts (pandas' sort_values(kind="stable"), Polars' sort(maintain_order=True)): every column type,
ties, NaN, None/null, -0.0, strings of any length and script, several columns in mixed
directions, both placements of missing values, empty frames, and the errors.

pandas, Polars and pyarrow are imported here unconditionally: without them this module fails to
import, and the run fails (scripts/test-python.sh installs them); it never skips."""

import itertools

import numpy as np
import pandas as pd
import polars as pl
import pyarrow  # noqa: F401  (pandas' Arrow-backed strings)
import pytest

import xsort

N = 600
PREFIX = "x" * 300  # longer than the widest window of a round: strings that tie for several rounds
WORDS = ["", "a", "a\0", "a\0\0", "ab", "b", "B", "é", "e\u0301", "中文", "中", "😀", "\x7f", "\uffff", "z" * 40, PREFIX, PREFIX + "a", PREFIX + "a\0", PREFIX + "b", PREFIX + "é" * 5]


def strings(rng, n):
    """Strings with ties: a pool of tricky ones and random ones of 0-60 characters from a few
    scripts (lengths differ in UTF-8 bytes and in code points)."""
    alphabet = list("ab\0 é中😀")
    made = ["".join(rng.choice(alphabet, rng.integers(0, 60))) for _ in range(40)]
    pool = np.array(WORDS + made, dtype=object)
    return pool[rng.integers(0, len(pool), n)]


def with_missing(rng, values, missing, share=0.15):
    out = np.array(values, dtype=object)
    out[rng.random(len(out)) < share] = missing
    return out


def floats(rng, n, dtype=np.float64):
    pool = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 2.0], dtype=dtype)
    values = rng.normal(0, 10, n).round(0).astype(dtype)  # few distinct values: ties
    special = rng.random(n) < 0.3
    values[special] = pool[rng.integers(0, len(pool), special.sum())]
    return values


def integers(rng, n, dtype):
    info = np.iinfo(dtype)
    pool = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1], dtype=dtype)
    return pool[rng.integers(0, len(pool), n)]


def pandas_frame(rng, n=N):
    times = np.datetime64("2024-01-01T00:00:00") + rng.integers(-5, 5, n).astype("timedelta64[h]")
    times[rng.random(n) < 0.1] = np.datetime64("NaT")
    columns = {d: integers(rng, n, d) for d in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"]}
    columns.update(
        f64=floats(rng, n),
        f32=floats(rng, n, np.float32),
        flag=rng.random(n) < 0.5,
        when=times,
        took=times - np.datetime64("2024-01-01T00:00:00"),
        obj=with_missing(rng, strings(rng, n), None),
        objnan=with_missing(rng, strings(rng, n), np.nan),
    )
    df = pd.DataFrame(columns)
    df["pystr"] = pd.array(with_missing(rng, strings(rng, n), None), dtype="string[python]")
    df["arrowstr"] = pd.array(with_missing(rng, strings(rng, n), None), dtype="string[pyarrow]")
    df["str"] = pd.Series(with_missing(rng, strings(rng, n), None)).astype("str")
    df["Int64"] = pd.array(with_missing(rng, rng.integers(-3, 3, n), None), dtype="Int64")
    df["boolean"] = pd.array(with_missing(rng, rng.random(n) < 0.5, None), dtype="boolean")
    df["zoned"] = pd.Series(times).dt.tz_localize("UTC").dt.tz_convert("America/New_York")
    df.index = rng.permutation(n) * 3  # labels that sort_values carries along, not positions
    return df


def polars_frame(rng, n=N):
    dtypes = [pl.Int8, pl.UInt8, pl.Int16, pl.UInt16, pl.Int32, pl.UInt32, pl.Int64, pl.UInt64]
    columns = {f"i{i}": pl.Series(integers(rng, n, _numpy_int(d))) for i, d in enumerate(dtypes)}
    df = pl.DataFrame(columns)
    nulls = rng.random(n) < 0.15
    f64 = pl.Series("f64", floats(rng, n)).scatter(np.flatnonzero(nulls), None)
    df = df.with_columns(
        f64,
        pl.Series("f32", floats(rng, n, np.float32)),
        pl.Series("flag", list(with_missing(rng, rng.random(n) < 0.5, None)), dtype=pl.Boolean),
        pl.Series("s", list(with_missing(rng, strings(rng, n), None)), dtype=pl.String),
        pl.Series("s2", list(strings(rng, n)), dtype=pl.String),
        pl.Series("day", rng.integers(0, 5, n), dtype=pl.Int32).cast(pl.Date),
        pl.Series("when", rng.integers(-5, 5, n) * 3_600_000_000, dtype=pl.Int64).cast(pl.Datetime("us")),
        pl.Series("took", rng.integers(-5, 5, n) * 1000, dtype=pl.Int64).cast(pl.Duration("us")),
    )
    return df


def _numpy_int(dtype):
    return {pl.Int8: "i1", pl.UInt8: "u1", pl.Int16: "i2", pl.UInt16: "u2", pl.Int32: "i4", pl.UInt32: "u4", pl.Int64: "i8", pl.UInt64: "u8"}[dtype]


def pandas_expected(df, by, descending, nulls_last):
    """The positions pandas' stable sort_values puts the rows in.

    pandas 3.1's sort by several columns takes float columns past its Categorical codes and, with
    na_position="first", turns their NaN into -inf, so that NaN ties with -inf (or with +inf,
    descending) instead of coming first: the reference then sorts them as nullable Float64, whose
    missing values go first as documented."""
    ascending = [not d for d in descending] if isinstance(descending, list) else not descending
    positions = df.reset_index(drop=True)
    if not nulls_last and isinstance(by, list) and len(by) > 1:
        floats = [c for c in by if positions[c].dtype.kind == "f"]
        positions = positions.astype({c: "Float64" for c in floats})
    return positions.sort_values(by, ascending=ascending, kind="stable", na_position="last" if nulls_last else "first").index.to_numpy()


def polars_expected(df, by, descending, nulls_last):
    indexed = df.with_row_index("__row")
    return indexed.sort(by, descending=descending, nulls_last=nulls_last, maintain_order=True)["__row"].to_numpy().astype(np.int64)


PANDAS_COLUMNS = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f64", "f32", "flag", "when", "took", "obj", "objnan", "pystr", "arrowstr", "str", "Int64", "boolean", "zoned"]
POLARS_COLUMNS = ["i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "f64", "f32", "flag", "s", "s2", "day", "when", "took"]


@pytest.mark.parametrize("column", PANDAS_COLUMNS)
@pytest.mark.parametrize("descending, nulls_last", [(False, True), (True, True), (False, False), (True, False)])
def test_pandas_one_column(rng, column, descending, nulls_last):
    df = pandas_frame(rng)
    got = xsort.argsort(df, column, descending=descending, nulls_last=nulls_last)
    assert got.dtype == np.int64
    assert list(got) == list(pandas_expected(df, column, descending, nulls_last))
    got_series = xsort.argsort(df[column], descending=descending, nulls_last=nulls_last)
    assert list(got_series) == list(got)


@pytest.mark.parametrize("column", POLARS_COLUMNS)
@pytest.mark.parametrize("descending, nulls_last", [(False, False), (True, False), (False, True), (True, True)])
def test_polars_one_column(rng, column, descending, nulls_last):
    df = polars_frame(rng)
    got = xsort.argsort(df, column, descending=descending, nulls_last=nulls_last)
    assert got.dtype == np.int64
    assert list(got) == list(polars_expected(df, column, descending, nulls_last))
    assert list(xsort.argsort(df[column], descending=descending, nulls_last=nulls_last)) == list(got)


@pytest.mark.parametrize("seed", range(12))
def test_pandas_several_columns(seed):
    rng = np.random.default_rng(seed)
    df = pandas_frame(rng)
    by = list(rng.choice(PANDAS_COLUMNS, rng.integers(2, 5), replace=False))
    descending = [bool(d) for d in rng.random(len(by)) < 0.5]
    for nulls_last in (True, False):
        expected = pandas_expected(df, by, descending, nulls_last)
        assert list(xsort.argsort(df, by, descending=descending, nulls_last=nulls_last)) == list(expected), (by, descending)
    got = xsort.sort(df, by, descending=descending)
    reference = df.sort_values(by, ascending=[not d for d in descending], kind="stable")
    pd.testing.assert_frame_equal(got, reference)


@pytest.mark.parametrize("seed", range(12))
def test_polars_several_columns(seed):
    rng = np.random.default_rng(seed)
    df = polars_frame(rng)
    by = list(rng.choice(POLARS_COLUMNS, rng.integers(2, 5), replace=False))
    descending = [bool(d) for d in rng.random(len(by)) < 0.5]
    for nulls_last in (False, True):
        expected = polars_expected(df, by, descending, nulls_last)
        assert list(xsort.argsort(df, by, descending=descending, nulls_last=nulls_last)) == list(expected), (by, descending)
    got = xsort.sort(df, by, descending=descending)
    assert got.equals(df.sort(by, descending=descending, maintain_order=True))


def test_defaults_are_the_libraries():
    """pandas puts missing values last, Polars first; one bool of descending for every column."""
    rng = np.random.default_rng(5)
    pdf = pandas_frame(rng)
    pd.testing.assert_frame_equal(xsort.sort(pdf, ["obj", "f64"], descending=True), pdf.sort_values(["obj", "f64"], ascending=False, kind="stable"))
    pd.testing.assert_series_equal(xsort.sort(pdf["f64"]), pdf["f64"].sort_values(kind="stable"))
    plf = polars_frame(rng)
    assert xsort.sort(plf, ["s", "f64"], descending=True).equals(plf.sort(["s", "f64"], descending=True, maintain_order=True))
    assert xsort.sort(plf["f64"]).equals(plf["f64"].sort())


def test_strings_order_as_python_compares_them():
    """Many rounds of windows: strings sharing 300-byte and longer prefixes, NUL bytes, every
    length around the windows' widths."""
    rng = np.random.default_rng(7)
    base = ["", "a", "a\0", "é", "😀", PREFIX, PREFIX * 3]
    values = [b + "".join(rng.choice(list("a\0é"), k)) for b in base for k in range(0, 40, 3) for _ in range(3)]
    values = list(np.array(values, dtype=object)[rng.permutation(len(values))])
    for frame in (pd.DataFrame({"s": values}), pl.DataFrame({"s": values})):
        for descending in (False, True):
            order = xsort.argsort(frame, "s", descending=descending)
            # sorted(reverse=True) keeps ties in input order too.
            expected = sorted(range(len(values)), key=lambda i: values[i], reverse=descending)
            assert [values[i] for i in order] == [values[i] for i in expected]
            assert list(order) == expected


def test_empty_and_one_row():
    for df in (pd.DataFrame({"a": np.array([], dtype=np.int64), "s": np.array([], dtype=object)}), pl.DataFrame({"a": [], "s": []}, schema={"a": pl.Int64, "s": pl.String})):
        for by in ("a", "s", ["s", "a"]):
            assert len(xsort.argsort(df, by)) == 0
            assert len(xsort.sort(df, by)) == 0
    assert list(xsort.argsort(pd.DataFrame({"s": ["x"], "a": [np.nan]}), ["s", "a"])) == [0]
    assert list(xsort.argsort(pl.DataFrame({"s": [None]}, schema={"s": pl.String}), "s")) == [0]


def test_sort_keeps_the_kind_and_the_index():
    df = pd.DataFrame({"score": [2.0, np.nan, 1.0, 2.0], "name": ["b", "a", None, "a"]}, index=["w", "x", "y", "z"])
    got = xsort.sort(df, ["score", "name"], descending=[True, False])
    assert list(got.index) == ["z", "w", "y", "x"]
    pd.testing.assert_frame_equal(got, df.sort_values(["score", "name"], ascending=[False, True], kind="stable"))
    series = xsort.sort(df["name"], nulls_last=False)
    pd.testing.assert_series_equal(series, df["name"].sort_values(kind="stable", na_position="first"))
    plf = pl.DataFrame({"a": [3, None, 1]})
    assert isinstance(xsort.sort(plf, "a"), pl.DataFrame)
    assert xsort.sort(plf["a"], descending=True).to_list() == [None, 3, 1]


def test_numpy_arrays_sort_as_before():
    rows = np.zeros(4, [("k", "<i4"), ("v", "<f8")])
    rows["k"] = [2, 1, 2, 0]
    assert list(xsort.argsort(rows, "k")) == [3, 1, 0, 2]
    assert list(xsort.argsort(rows, order="k", descending=True)) == [0, 2, 1, 3]
    assert xsort.sort(rows, "k").tobytes() == xsort.sort_array(rows, "k").tobytes()
    assert list(xsort.sort(np.array([3, 1, 2]))) == [1, 2, 3]
    with pytest.raises(xsort.UsageError, match="nulls_last"):
        xsort.argsort(rows, "k", nulls_last=True)


def test_columns_are_read_without_a_copy_where_the_library_allows(monkeypatch):
    """A numeric column without missing values reaches the array sort as the frame's own memory."""
    df = pd.DataFrame({"x": np.arange(10.0)[::-1]})
    pldf = pl.DataFrame({"x": np.arange(10.0)[::-1]})
    seen = []
    real = xsort._arrays.argsort
    monkeypatch.setattr(xsort._arrays, "argsort", lambda arr, *a, **k: seen.append(arr) or real(arr, *a, **k))
    xsort.argsort(df, "x")
    xsort.argsort(pldf, "x")
    assert np.shares_memory(seen[0], df["x"].to_numpy())
    assert np.shares_memory(seen[1], pldf["x"].to_numpy())


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: xsort.argsort(pd.DataFrame({"a": [1]}), "b"), "no column named 'b'"),
        (lambda: xsort.argsort(pl.DataFrame({"a": [1]}), ["a", "b"]), "no column named 'b'"),
        (lambda: xsort.argsort(pd.DataFrame({"a": [1, "x"]}), "a"), "column 'a' of type object: row 0 holds a int"),
        (lambda: xsort.argsort(pd.DataFrame({"c": pd.Categorical(["x"])}), "c"), "column 'c' of type category"),
        (lambda: xsort.argsort(pl.DataFrame({"c": ["x"]}, schema={"c": pl.Categorical}), "c"), "column 'c' of type Categorical"),
        (lambda: xsort.argsort(pl.DataFrame({"l": [[1]]}), "l"), "column 'l' of type List"),
        (lambda: xsort.argsort(pd.DataFrame({"a": [1], "b": [2]}), ["a", "b"], descending=[True]), "one bool per sorted column \\(2\\)"),
        (lambda: xsort.argsort(pl.DataFrame({"a": [1]}), "a", nulls_last=[True, False]), "nulls_last must be"),
        (lambda: xsort.argsort(pd.DataFrame({"a": [1]})), "by must name"),
        (lambda: xsort.argsort(pd.Series([1]), "a"), "a Series is sorted by its values"),
        (lambda: xsort.sort(pd.DataFrame({"a": [1]}), "a", memory=1 << 20), "numpy arrays"),
    ],
)
def test_errors_name_the_column(call, message):
    with pytest.raises(xsort.UsageError, match=message):
        call()


def test_pandas_and_polars_are_not_imported_for_arrays():
    import subprocess
    import sys

    code = "import sys, numpy as np, xsort; xsort.sort(np.array([2, 1])); xsort.argsort(np.array([2, 1])); print('pandas' in sys.modules, 'polars' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False False\n"


def test_many_rows_of_mixed_columns():
    """A larger case through every path at once (records of null flags, ranks and values)."""
    rng = np.random.default_rng(11)
    df = pandas_frame(rng, 20_000)
    for by, descending in itertools.product([["obj", "f64"], ["arrowstr", "i8", "flag"]], [False, True]):
        assert list(xsort.argsort(df, by, descending=descending)) == list(pandas_expected(df, by, descending, True))
