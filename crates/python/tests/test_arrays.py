"""sort_array and argsort against numpy: every field type and byte order, structured and plain
arrays, special floats, descending fields, strided arrays, budgets that spill, bad arguments,
the GIL and Ctrl-C."""

import os
import threading
import time

import numpy as np
import pytest

import xsort
from conftest import interrupted, reference_order

INTS = ["u1", "i1", "<u2", ">u2", "<i2", ">i2", "<u4", ">u4", "<i4", ">i4", "<u8", ">u8", "<i8", ">i8"]
FLOATS = ["<f4", ">f4", "<f8", ">f8"]
TEXTS = ["S1", "S6", "<U1", "<U3", ">U2", "=U2"]
TYPES = INTS + FLOATS + TEXTS + ["?"]
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324]


def values(rng, dtype, n):
    """Random values of `dtype`: few distinct ones half the time (ties), the full range otherwise."""
    dtype = np.dtype(dtype)
    few = rng.random() < 0.5
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        if few:
            return rng.choice(np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1], dtype=dtype), n)
        return rng.integers(info.min, info.max, n, dtype=dtype.newbyteorder("="), endpoint=True).astype(dtype)
    if dtype.kind == "f":
        pool = np.array(SPECIAL, dtype=dtype)
        out = rng.choice(pool, n) if few else rng.normal(0, 1e3, n).astype(dtype)
        out[rng.random(n) < 0.1] = rng.choice(pool, n)[:1]
        return out
    if dtype.kind == "S":
        width = dtype.itemsize
        alphabet = np.array([0, 1, 65, 66, 127, 128, 255], dtype=np.uint8) if few else np.arange(256, dtype=np.uint8)
        return rng.choice(alphabet, (n, width)).view(f"S{width}").reshape(n)
    if dtype.kind == "U":
        width = dtype.itemsize // 4
        alphabet = np.array([0, 65, 97, 233, 0x4E2D, 0xFFFF, 0x1F600, 0x10FFFF], dtype=np.uint32) if few else rng.integers(0, 0x110000, 64, dtype=np.uint32)
        codes = rng.choice(alphabet, (n, width))
        codes[(codes >= 0xD800) & (codes < 0xE000)] = 0x20
        return codes.astype(np.dtype(dtype.byteorder.replace("|", "=") + "u4")).view(dtype).reshape(n)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    raise AssertionError(dtype)


def check(arr, order=None, descending=False, **options):
    """sort_array and argsort of `arr` equal numpy's stable order, byte for byte."""
    names = [None] if arr.dtype.names is None else list(arr.dtype.names) if order is None else [order] if isinstance(order, str) else list(order)
    desc = [descending] * len(names) if isinstance(descending, bool) else list(descending)
    expected = arr[reference_order(arr, names, desc)]
    got = xsort.sort_array(arr, order, descending=descending, **options)
    assert got.dtype == arr.dtype
    assert got.tobytes() == expected.tobytes()
    indices = xsort.argsort(arr, order, descending=descending)
    assert indices.dtype == np.int64
    assert np.array_equal(indices, reference_order(arr, names, desc))


@pytest.mark.parametrize("dtype", TYPES)
def test_plain_arrays_of_every_type(rng, dtype):
    for n in (0, 1, 2, 3000):
        arr = values(rng, dtype, n)
        check(arr)
        check(arr, descending=True)


@pytest.mark.parametrize("dtype", TYPES)
def test_ascending_is_numpy_lexsort_of_the_field(rng, dtype):
    arr = np.zeros(2000, [("pad", "u1"), ("f", dtype)])
    arr["f"] = values(rng, dtype, len(arr))
    arr["pad"] = rng.integers(0, 256, len(arr))
    got = xsort.sort_array(arr, "f")
    # In native byte order: numpy's lexsort misorders a big-endian unicode field of a structured
    # array (its argsort does not).
    native = arr["f"].astype(arr["f"].dtype.newbyteorder("="))
    assert got.tobytes() == arr[np.lexsort([native])].tobytes()


def test_random_structured_arrays(rng):
    for _ in range(60):
        count = int(rng.integers(1, 5))
        fields = [(f"f{i}", str(rng.choice(TYPES))) for i in range(count)]
        arr = np.zeros(int(rng.integers(0, 1500)), fields)
        for name, dtype in fields:
            arr[name] = values(rng, dtype, len(arr))
        names = [f for f, _ in fields]
        order = list(rng.permutation(names)[: int(rng.integers(1, count + 1))])
        descending = [bool(d) for d in rng.random(len(order)) < 0.5]
        check(arr, order, descending)


def test_keys_longer_than_the_entry_prefix_tie_at_every_level(rng):
    """Keys of 24 to 43 bytes (an entry holds at most 15 of them) whose fields take two or three
    values each, so that records tie on every prefix and window of the key and often fully:
    the sort refines the ties level by level and must still equal numpy's stable order."""
    fields = [("a", "<i8"), ("b", ">f8"), ("c", "<U3"), ("d", "S5"), ("e", ">u2"), ("f", "<f4")]
    pools = {
        "a": np.array([-(2**63), 0, 2**40], dtype="<i8"),
        "b": np.array([np.nan, -0.5, np.inf], dtype=">f8"),
        "c": np.array(["ab", "ab\u00e9", "b"], dtype="<U3"),
        "d": np.array([b"", b"x\x00", b"x\xff"], dtype="S5"),
        "e": np.array([1, 65535], dtype=">u2"),
        "f": np.array([-1.0, 2.5], dtype="<f4"),
    }
    for n in (40, 5000, 60_000):
        arr = np.zeros(n, fields)
        for name, _ in fields:
            arr[name] = rng.choice(pools[name], n)
        for _ in range(4):
            order = list(rng.permutation([f for f, _ in fields]))
            descending = [bool(d) for d in rng.random(len(order)) < 0.5]
            check(arr, order, descending)


def test_special_floats(rng):
    for dtype in FLOATS:
        arr = np.array(SPECIAL * 7, dtype=dtype)[rng.permutation(70)]
        check(arr)
        check(arr, descending=True)
        ascending = xsort.sort_array(arr)
        assert np.isnan(ascending[-14:]).all() and not np.isnan(ascending[:-14]).any()  # 7 x (nan, -nan)
        assert np.isnan(xsort.sort_array(arr, descending=True)[:14]).all()


def test_negative_zero_keeps_its_bits_and_ties_in_input_order():
    arr = np.zeros(4, [("x", "<f8"), ("i", "u1")])
    arr["x"] = [0.0, -0.0, 0.0, -0.0]
    arr["i"] = [0, 1, 2, 3]
    got = xsort.sort_array(arr, "x")
    assert list(got["i"]) == [0, 1, 2, 3]
    assert list(np.signbit(got["x"])) == [False, True, False, True]


def test_unnamed_fields_are_not_compared():
    arr = np.array([(1, 9), (0, 5), (1, 2), (0, 7)], [("k", "i4"), ("v", "i4")])
    assert xsort.sort_array(arr, "k")["v"].tolist() == [5, 7, 9, 2]


def test_strided_arrays_are_copied_and_sorted(rng):
    table = rng.integers(-100, 100, (1000, 3)).astype("<i8")
    column = table[:, 1]
    assert not column.flags.c_contiguous
    check(column)
    arr = np.zeros(3000, [("a", "<i4"), ("b", "<f8")])
    arr["a"] = values(rng, "<i4", 3000)
    arr["b"] = values(rng, "<f8", 3000)
    check(arr[::3], ["b", "a"], [True, False])
    check(arr[::-1], "a")
    check(arr["b"])  # a field view: strided by the record


def test_read_only_input_is_left_unchanged(rng):
    arr = values(rng, "<i8", 5000)
    before = arr.copy()
    arr.flags.writeable = False
    check(arr)
    assert np.array_equal(arr, before)


def test_memory_budget_spills_and_sorts_alike(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    arr = np.zeros(200_000, [("k", "S10"), ("v", "<i8")])
    arr["k"] = values(rng, "S10", len(arr))
    arr["v"] = np.arange(len(arr))
    check(arr, "k", memory=1 << 20, threads=2)
    assert list(tmp_path.iterdir()) == []


def test_bigger_arrays_and_threads(rng):
    arr = np.zeros(300_000, [("a", "<f8"), ("b", "<i8")])
    arr["a"] = values(rng, "<f8", len(arr))
    arr["b"] = values(rng, "<i8", len(arr))
    for threads in (1, 2, 3):
        check(arr, ["a", "b"], [False, True], threads=threads)


def test_out_receives_the_sort_and_is_returned_on_every_path(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    arr = np.zeros(100_000, [("k", "S10"), ("v", "<i8")])
    arr["k"] = values(rng, "S10", len(arr))
    arr["v"] = np.arange(len(arr))
    out = np.zeros(len(arr), arr.dtype)
    out["v"] = -1
    for options in ({}, {"memory": 1 << 20}, {"descending": True}):
        expected = xsort.sort_array(arr, "k", **options)
        got = xsort.sort_array(arr, "k", out=out, **options)
        assert got is out and out.tobytes() == expected.tobytes(), options
    assert list(tmp_path.iterdir()) == []
    # The -0.0 path (sorted by a copy of the keys) and the empty array.
    zeros = np.array([0.0, -0.0, -1.0, 0.0], "<f8")
    into = np.empty_like(zeros)
    assert xsort.sort_array(zeros, out=into) is into
    assert into.tobytes() == zeros[[2, 0, 1, 3]].tobytes()
    assert xsort.sort_array(zeros[:0], out=into[:0]).size == 0


@pytest.mark.parametrize(
    "make_out, error, message",
    [
        (lambda a: list(a), TypeError, "out must be a numpy array, not list"),
        (lambda a: np.empty(len(a) + 1, a.dtype), ValueError, "out must have the shape (4,) and dtype int32"),
        (lambda a: np.empty(len(a), "i8"), ValueError, "not (4,) and int64"),
        (lambda a: np.empty(2 * len(a), a.dtype)[::2], ValueError, "C-contiguous, writable"),
        (lambda a: np.frombuffer(bytes(a.nbytes), a.dtype), ValueError, "C-contiguous, writable"),
        (lambda a: a, ValueError, "must not overlap the array being sorted"),
    ],
)
def test_bad_out_arrays_are_refused_before_anything_is_written(make_out, error, message):
    arr = np.array([3, 1, 2, 0], "i4")
    out = make_out(arr)
    before = np.array(out, copy=True)
    with pytest.raises(error) as e:
        xsort.sort_array(arr, out=out)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert arr.tolist() == [3, 1, 2, 0] and np.array_equal(np.asarray(out), before)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: xsort.sort_array([3, 1, 2]), TypeError, "xsort sorts numpy arrays, not list"),
        (lambda: xsort.sort_array(np.zeros((2, 2))), ValueError, "xsort sorts 1-D arrays, not 2-D ones"),
        (lambda: xsort.sort_array(np.zeros(3, "c16")), TypeError, "xsort cannot sort by the array of type complex128"),
        (lambda: xsort.sort_array(np.zeros(3, "f2")), TypeError, "of type float16"),
        (lambda: xsort.sort_array(np.zeros(3, "O")), TypeError, "of type object"),
        (lambda: xsort.sort_array(np.zeros(3, [("a", "i4")]), "b"), ValueError, "no field named 'b' (the fields are a)"),
        (lambda: xsort.sort_array(np.zeros(3, "i4"), "a"), ValueError, "order names fields of a structured array"),
        (lambda: xsort.sort_array(np.zeros(3, [("a", "i4"), ("b", "i4")]), ["a", "b"], descending=[True]), ValueError, "one bool per sorted field (2)"),
        (lambda: xsort.sort_array(np.zeros(3, [("a", "i4", 2)]), "a"), TypeError, "sub-array field"),
        (lambda: xsort.sort_array(np.zeros(3), threads=0), ValueError, "threads must be a positive int"),
        (lambda: xsort.sort_array(np.zeros(3), memory=-1), ValueError, "memory must be a positive number of bytes"),
        (lambda: xsort.argsort(np.zeros(3), descending="yes"), ValueError, "descending must be a bool"),
    ],
)
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=None) as e:
        call()
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_the_gil_is_released_while_sorting(rng):
    arr = values(rng, "<f8", 3_000_000)
    ticks = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.05)
    before = ticks[0]
    start = time.monotonic()
    xsort.sort_array(arr, threads=1)
    took = time.monotonic() - start
    during = ticks[0] - before
    done.set()
    counter.join()
    # With the GIL held for the whole sort, the counter could not run meanwhile.
    assert took > 0.05 and during > 1000, (took, during)


def test_ctrl_c_interrupts_an_in_memory_sort(rng):
    arr = np.zeros(6_000_000, [("k", "S12"), ("v", "<u4")])
    arr["k"] = values(rng, "S12", len(arr))
    took = interrupted(lambda: xsort.sort_array(arr, "k", threads=1), after=0.05)
    assert took < 1.0
    # The package still works after the interrupt.
    check(arr[:1000], "k")


def test_thread_requests_are_capped_at_the_cpus(rng, tmp_path):
    # threads=3000 once started 3,004 threads (12 s for 1,000 numbers); the sort takes at most the
    # CPUs the process may use, as the xsort command does with --parallel.
    cpus = len(os.sched_getaffinity(0))
    tasks = lambda: len(os.listdir("/proc/self/task"))  # noqa: E731
    before, peak, done = tasks(), [0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], tasks())
            time.sleep(0.0005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        arr = rng.integers(0, 1 << 60, 200_000)
        for _ in range(5):
            assert np.array_equal(xsort.sort_array(arr, threads=3000), np.sort(arr, kind="stable"))
    finally:
        done.set()
        watcher.join()
    assert peak[0] <= before + 1 + cpus + 4, f"{peak[0]} threads at once for {cpus} CPUs (before: {before})"
    (tmp_path / "in").write_bytes(rng.integers(0, 256, 100 * 1000, dtype=np.uint8).tobytes())
    stats = xsort.sort_file(tmp_path / "in", tmp_path / "out", record_size=100, keys=["0:10"], threads=10**6)
    assert stats["threads"] == cpus
