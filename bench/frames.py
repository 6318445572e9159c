#!/usr/bin/env python3
"""xsort's DataFrame sorts against pandas' sort_values and Polars' sort, in memory.

    target/pyenv/bin/python bench/frames.py [--rows N] [--runs K]

Run it with a Python that has the xsort package, pandas and Polars (and pyarrow, pandas' default
string storage when installed): `bash scripts/test-python.sh` makes such a virtualenv in
target/pyenv. The data (default 10^7 rows) is made in memory, no file is written: a float column
"score" (normal values rounded to 4 digits, so with ties, 1% NaN) and a string column "name"
(drawn from 10^6 distinct random lowercase strings of 3 to 24 letters). Cases, each on a pandas
DataFrame (the string column in pandas' default string dtype) and a Polars DataFrame built from it:

  by "score", by "name", by ["name", "score"] with "score" descending

each timed as xsort.argsort (the permutation), xsort.sort (the sorted frame) and the library's
own stable sort (pandas: df.sort_values(by, kind="stable"); Polars: df.sort(by,
maintain_order=True)). Every xsort.sort result is checked to equal the library's. K runs each
(default 1), medians reported; the machine (CPU model, cores, load average) is printed first.
"""

import argparse
import os
import platform
import statistics
import time

import numpy as np
import pandas as pd
import polars as pl

import xsort

CASES = [("score", False), ("name", False), (["name", "score"], [False, True])]


def machine() -> str:
    model = "unknown CPU"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{model}, {os.cpu_count()} CPUs, load average {load}; Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, Polars {pl.__version__}"


def timed(runs: int, call):
    """The median seconds of ``runs`` calls and the last call's result (the previous one is freed
    before the clock starts)."""
    times, result = [], None
    for _ in range(runs):
        result = None
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def frames(rows: int):
    rng = np.random.default_rng(30)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype="S1")
    lengths = rng.integers(3, 25, 1_000_000)
    chars = rng.choice(letters, lengths.sum()).tobytes().decode()
    ends = np.cumsum(lengths)
    pool = np.array([chars[e - n : e] for e, n in zip(ends, lengths)], dtype=object)
    score = rng.normal(0, 100, rows).round(4)
    score[rng.random(rows) < 0.01] = np.nan
    pdf = pd.DataFrame({"score": score, "name": pool[rng.integers(0, len(pool), rows)]})
    pdf["name"] = pdf["name"].astype(pd.StringDtype(na_value=np.nan) if pd.__version__ >= "3" else "string")
    return pdf, pl.from_pandas(pdf)


def bench_case(runs: int, library: str, df, by, descending) -> None:
    if library == "pandas":
        ascending = [not d for d in descending] if isinstance(descending, list) else not descending
        reference = lambda: df.sort_values(by, ascending=ascending, kind="stable")  # noqa: E731
    else:
        reference = lambda: df.sort(by, descending=descending, maintain_order=True)  # noqa: E731
    t_ref, expected = timed(runs, reference)
    t_arg, _ = timed(runs, lambda: xsort.argsort(df, by, descending=descending))
    t_sort, got = timed(runs, lambda: xsort.sort(df, by, descending=descending))
    same = got.equals(expected)
    if library == "pandas":
        same = same and got.index.equals(expected.index)
    assert same, f"{library} by {by}: xsort.sort differs from the library's sort"
    name = "df.sort_values" if library == "pandas" else "df.sort"
    print(f"{library:7} by {str(by):18} {name:15} {t_ref:7.2f} s   xsort.argsort {t_arg:6.2f} s   xsort.sort {t_sort:6.2f} s   ({t_ref / t_sort:4.1f}x; same result)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    start = time.perf_counter()
    pdf, pldf = frames(args.rows)
    print(f"{args.rows} rows made in {time.perf_counter() - start:.1f} s: score float64 (1% NaN), name {pdf['name'].dtype} / {pldf['name'].dtype}")
    for by, descending in CASES:
        bench_case(args.runs, "pandas", pdf, by, descending)
        bench_case(args.runs, "polars", pldf, by, descending)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
