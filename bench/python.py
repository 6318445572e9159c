#!/usr/bin/env python3
"""xsort for Python against numpy, Polars and DuckDB: ratios measured in one run on this machine.

    python3 bench/python.py [--rows N] [--csv-rows N] [--dir DIR] [--runs K]

Runs in a virtualenv of its own (target/bench-python-venv, made on first use: numpy, polars and
duckdb from PyPI, and this repository's package from ./crates/python). Cases (the issue's targets):

  1. N records of 100 bytes (default 10^7), key S10, in memory: xsort.sort_array(arr, "key")
     against numpy's stable argsort + take                               (target: at least 10x);
     then both into an output array they reuse (out=), reported beside the target
  2. N structured rows of 24 bytes (a int64, b float64, c int64), order=["b", "a"]:
     xsort.sort_array against np.sort(order=...)                        (target: at least 5x)
  3. a CSV-like file of --csv-rows lines (default 10^7 lines, about 1 GB) sorted with
     -t, -k3,3 -k1,1nr: xsort.sort_file against Polars (read_csv().sort().write_csv()) and DuckDB
     (COPY (SELECT ... ORDER BY ...) TO ...), each file read once before timing
                                                                          (target: at least 4x each)

Outputs are checked: the array sorts equal numpy's byte for byte (case 2 by the named fields only,
which np.sort does not limit itself to: its order of rows equal in b and a may differ, so that case
checks the rows' keys and that the rows are the same); each CSV output holds the input's lines in
a valid order. K runs each (default 1), medians reported. Files go to DIR (default $TMPDIR or /tmp)
and are deleted at the end.
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "bench-python-venv")


def in_own_venv():
    """Re-runs this script in its virtualenv (made first if missing) unless it is running there."""
    python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "numpy", "polars", "duckdb"], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", os.path.join(ROOT, "crates", "python")], check=True)
    os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])


def timed(runs, call):
    """The median seconds of `runs` calls, and the last call's result. The previous call's result
    is freed before the clock starts: unmapping a 1 GB array is not part of the next sort."""
    times, result = [], None
    for _ in range(runs):
        result = None
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} CPUs ({cpu}), load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"


def report(case, xsort_s, other, other_s, target):
    ratio = other_s / xsort_s
    verdict = "meets" if ratio >= target else "misses"
    print(f"{case}: xsort {xsort_s:.2f} s, {other} {other_s:.2f} s: {ratio:.1f}x ({verdict} the {target}x target)", flush=True)


def records_case(np, xsort, rows, runs):
    rng = np.random.default_rng(1)
    arr = rng.integers(0, 256, (rows, 100), dtype=np.uint8).view([("key", "S10"), ("rest", "V90")]).reshape(rows)
    xsort_s, got = timed(runs, lambda: xsort.sort_array(arr, "key"))
    numpy_s, expected = timed(runs, lambda: arr.take(np.argsort(arr["key"], kind="stable")))
    assert got.tobytes() == expected.tobytes(), "case 1: outputs differ"
    report(f"1. {rows} records of 100 bytes, key S10, in memory", xsort_s, "numpy argsort(stable)+take", numpy_s, 10)
    # Beside the target: both sorting into an output array they reuse (numpy's take(out=)), which
    # leaves out the first touch of a new 1 GB array on every call.
    got, expected = got.copy(), expected.copy()
    xsort_s, _ = timed(runs, lambda: xsort.sort_array(arr, "key", out=got))
    numpy_s, _ = timed(runs, lambda: arr.take(np.argsort(arr["key"], kind="stable"), out=expected))
    assert got.tobytes() == expected.tobytes(), "case 1 with out=: outputs differ"
    ratio = numpy_s / xsort_s
    print(f"   the same into a reused array (out=, both): xsort {xsort_s:.2f} s, numpy {numpy_s:.2f} s: {ratio:.1f}x", flush=True)


def structured_case(np, xsort, rows, runs):
    rng = np.random.default_rng(2)
    arr = np.empty(rows, [("a", "<i8"), ("b", "<f8"), ("c", "<i8")])
    arr["a"] = rng.integers(0, 1000, rows)
    arr["b"] = rng.integers(0, 1000, rows) / 8  # ties, broken by a
    arr["c"] = rng.integers(-(2**62), 2**62, rows)
    xsort_s, got = timed(runs, lambda: xsort.sort_array(arr, ["b", "a"]))
    numpy_s, expected = timed(runs, lambda: np.sort(arr, order=["b", "a"]))
    assert (got[["b", "a"]] == expected[["b", "a"]]).all(), "case 2: keys differ"
    assert (np.sort(got, order=["b", "a", "c"]) == np.sort(expected, order=["b", "a", "c"])).all(), "case 2: rows differ"
    assert got.tobytes() == arr[np.lexsort([arr["a"], arr["b"]])].tobytes(), "case 2: not numpy's lexsort order"
    report(f"2. {rows} rows of 24 bytes, order=['b', 'a'] (float64, int64)", xsort_s, "np.sort(order=...)", numpy_s, 5)


def write_csv(np, path, rows):
    """Lines `id,word,code,payload`: id an integer (ties across codes), code one of 26^3 words."""
    rng = np.random.default_rng(3)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype="S1")
    with open(path, "wb") as f:
        for start in range(0, rows, 1_000_000):
            n = min(1_000_000, rows - start)
            ids = rng.integers(0, 10**9, n).astype("S10")
            words = letters[rng.integers(0, 26, (n, 8))].view("S8").reshape(n)
            codes = letters[rng.integers(0, 26, (n, 3))].view("S3").reshape(n)
            payload = rng.integers(0, 2**63, (n, 4)).astype("S19")
            pad = np.char.add(np.char.add(payload[:, 0], payload[:, 1]), np.char.add(payload[:, 2], payload[:, 3]))
            lines = np.char.add(np.char.add(np.char.add(ids, b","), np.char.add(words, b",")), np.char.add(np.char.add(codes, b","), pad))
            f.write(b"\n".join(lines.tolist()) + b"\n")


def check_csv(pl, path, lines_sorted, xsort, work):
    """`path` holds the input's lines (compared by their byte-order sort) with the third field
    ascending and the first descending among equal third fields."""
    canon = os.path.join(work, "canon")
    xsort.sort_file(path, canon)
    with open(canon, "rb") as a, open(lines_sorted, "rb") as b:
        while True:
            x, y = a.read(1 << 24), b.read(1 << 24)
            assert x == y, f"{path}: not the input's lines"
            if not x:
                break
    df = pl.read_csv(path, has_header=False, schema={"id": pl.Int64, "word": pl.Utf8, "code": pl.Utf8, "pad": pl.Utf8})
    code, ident = df["code"], df["id"]
    ok = (code.head(-1) < code.tail(-1)) | ((code.head(-1) == code.tail(-1)) & (ident.head(-1) >= ident.tail(-1)))
    assert ok.all(), f"{path}: lines out of order"


def csv_case(np, xsort, rows, runs, work):
    import duckdb
    import polars as pl

    src = os.path.join(work, "in.csv")
    write_csv(np, src, rows)
    size = os.path.getsize(src)
    outs = {k: os.path.join(work, f"{k}.csv") for k in ("xsort", "polars", "duckdb")}
    read_once = lambda: open(src, "rb").read() and None  # noqa: E731 (into the page cache)
    read_once()
    xsort_s, _ = timed(runs, lambda: xsort.sort_file(src, outs["xsort"], args=["-t,", "-k3,3", "-k1,1nr"]))
    read_once()
    schema = {"id": pl.Int64, "word": pl.Utf8, "code": pl.Utf8, "pad": pl.Utf8}
    polars_s, _ = timed(runs, lambda: pl.read_csv(src, has_header=False, schema=schema).sort(["code", "id"], descending=[False, True]).write_csv(outs["polars"], include_header=False))
    read_once()
    con = duckdb.connect()
    query = f"COPY (SELECT * FROM read_csv('{src}', header=false, columns={{'id': 'BIGINT', 'word': 'VARCHAR', 'code': 'VARCHAR', 'pad': 'VARCHAR'}}) ORDER BY code, id DESC) TO '{outs['duckdb']}' (HEADER false)"
    duckdb_s, _ = timed(runs, lambda: con.execute(query))
    lines_sorted = os.path.join(work, "lines")
    xsort.sort_file(src, lines_sorted)
    for out in outs.values():
        check_csv(pl, out, lines_sorted, xsort, work)
    label = f"3. CSV-like file, {rows} lines ({size / 1e9:.2f} GB), -t, -k3,3 -k1,1nr"
    report(label, xsort_s, "Polars", polars_s, 4)
    report(label, xsort_s, "DuckDB", duckdb_s, 4)


def main():
    in_own_venv()
    import numpy as np

    import xsort

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--csv-rows", type=int, default=10_000_000)
    parser.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cases", default="123")
    args = parser.parse_args()
    print(f"machine: {machine()}; numpy {np.__version__}, xsort {xsort.__version__}", flush=True)
    work = tempfile.mkdtemp(prefix="xsort-python.", dir=args.dir)
    try:
        if "1" in args.cases:
            records_case(np, xsort, args.rows, args.runs)
        if "2" in args.cases:
            structured_case(np, xsort, args.rows, args.runs)
        if "3" in args.cases:
            import duckdb
            import polars

            print(f"polars {polars.__version__}, duckdb {duckdb.__version__}", flush=True)
            csv_case(np, xsort, args.csv_rows, args.runs, work)
    finally:
        shutil.rmtree(work)
    print(f"after: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
