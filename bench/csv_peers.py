#!/usr/bin/env python3
"""The peers and the output checks of bench/csv.sh (run in its virtualenv, with duckdb and polars).

    python bench/csv_peers.py duckdb|polars|polars-lazy IN OUT
        sorts the CSV file IN (header `id,name,city,price,comment`) by its price column, as
        numbers, into OUT with the header first, and prints the seconds it took (the import of
        the library and the interpreter's start are not timed);
    python bench/csv_peers.py check IN KIND:OUT ...
        checks each OUT against IN and prints one line for each: `OUT ok` or `OUT FAILED: why`;
        exits with 1 if one failed. KIND is
          csv-stable  an xsort --csv --header -s output: its records are IN's records byte for
                      byte (the same multiset of byte strings, the header first), and equal prices
                      keep IN's order (the id column is the record's number in IN);
          csv         a peer's output: the same multiset of rows as IN's, parsed with the csv
                      module, the id and price as numbers (a peer writes 12.50 as 12.5 and quotes
                      fields its own way), the header first;
          lines       a line sort `-t, -k4,4n`: the same multiset of lines as IN's, in the order of
                      GNU sort -n on the fourth comma-separated field (the header and the pieces
                      of multi-line records are lines like the others).
        Every csv output must have its price column non-decreasing, as numbers.
"""

import csv
import os
import re
import sys
import time

COLUMNS = ["id", "name", "city", "price", "comment"]
MASK = (1 << 64) - 1


def duckdb_sort(src, out):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET temp_directory = '{os.path.dirname(os.path.abspath(out))}/duckdb.tmp'")
    types = "{'id': 'BIGINT', 'name': 'VARCHAR', 'city': 'VARCHAR', 'price': 'DOUBLE', 'comment': 'VARCHAR'}"
    query = (
        f"COPY (SELECT * FROM read_csv('{src}', header = true, delim = ',', quote = '\"', escape = '\"', columns = {types}) "
        f"ORDER BY price) TO '{out}' (HEADER, DELIMITER ',')"
    )
    start = time.perf_counter()
    con.execute(query)
    return time.perf_counter() - start


def polars_schema(pl):
    return {"id": pl.Int64, "name": pl.String, "city": pl.String, "price": pl.Float64, "comment": pl.String}


def polars_sort(src, out):
    import polars as pl

    schema = polars_schema(pl)
    start = time.perf_counter()
    pl.read_csv(src, schema=schema).sort("price").write_csv(out)
    return time.perf_counter() - start


def polars_lazy_sort(src, out):
    import polars as pl

    schema = polars_schema(pl)
    start = time.perf_counter()
    pl.scan_csv(src, schema=schema).sort("price").sink_csv(out)
    return time.perf_counter() - start


def raw_records(path):
    """The file's records as bytes, each with its newline: a record ends at a newline outside
    quotes (an even number of quote characters so far in the record)."""
    with open(path, "rb") as f:
        pending, quotes = [], 0
        for line in f:
            quotes += line.count(b'"')
            if quotes & 1:
                pending.append(line)
                continue
            if pending:
                pending.append(line)
                yield b"".join(pending)
                pending = []
            else:
                yield line
            quotes = 0
        if pending:
            yield b"".join(pending)


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        yield from csv.reader(f)


def fingerprint(items):
    """(count, sum of hashes mod 2^64): equal for two multisets of the same items (in one process)."""
    n = total = 0
    for item in items:
        n += 1
        total = (total + hash(item)) & MASK
    return n, total


def normal(row):
    return (int(row[0]), row[1], row[2], float(row[3]), row[4])


def check_csv(path, want, stable):
    """None if `path` is right, else why not. `want`: IN's fingerprints (see main)."""
    it = rows(path)
    header = next(it, None)
    if header != COLUMNS:
        return f"the first record is {header!r}, not the header"
    n = total = 0
    last_price, last_id = float("-inf"), 0
    for row in it:
        if len(row) != len(COLUMNS):
            return f"record {n + 2} has {len(row)} fields: {row!r}"
        key = normal(row)
        n += 1
        total = (total + hash(key)) & MASK
        price, ident = key[3], key[0]
        if price < last_price:
            return f"record {n + 1} (id {ident}): price {row[3]} after {last_price}"
        if stable and price == last_price and ident < last_id:
            return f"record {n + 1}: id {ident} after id {last_id} at the equal price {row[3]} (not stable)"
        last_price, last_id = price, ident
    if (n, total) != want["rows"]:
        return f"not the input's rows: {n} rows, fingerprint {total:x}; the input has {want['rows'][0]} rows, {want['rows'][1]:x}"
    if stable:
        raw = raw_records(path)
        first = next(raw, None)
        if first != want["header"]:
            return f"the first record's bytes are {first!r}, not the header's {want['header']!r}"
        got = fingerprint(raw)
        if got != want["raw"]:
            return f"not the input's records byte for byte: {got[0]} records, fingerprint {got[1]:x}; the input's {want['raw'][0]}, {want['raw'][1]:x}"
    return None


NUMBER = re.compile(rb"\s*(-?(?:\d+(?:\.\d*)?|\.\d+))")


def gnu_number(line):
    """GNU sort -n's value of the fourth field split on commas (no number, or no field: 0)."""
    fields = line.rstrip(b"\n").split(b",", 4)
    m = NUMBER.match(fields[3]) if len(fields) > 3 else None
    return float(m.group(1)) if m else 0.0


def check_lines(path, want):
    last = float("-inf")
    n = total = 0
    with open(path, "rb") as f:
        for line in f:
            n += 1
            total = (total + hash(line)) & MASK
            value = gnu_number(line)
            if value < last:
                return f"line {n}: key {value} after {last}: {line!r}"
            last = value
    if (n, total) != want["lines"]:
        return f"not the input's lines: {n} lines, fingerprint {total:x}; the input has {want['lines'][0]}, {want['lines'][1]:x}"
    return None


def check(src, outputs):
    with open(src, "rb") as f:
        want = {"lines": fingerprint(f)}
    raw = raw_records(src)
    want["header"] = next(raw)
    want["raw"] = fingerprint(raw)
    it = rows(src)
    assert next(it) == COLUMNS, "the input's header"
    want["rows"] = fingerprint(normal(row) for row in it)
    failed = False
    for arg in outputs:
        kind, path = arg.split(":", 1)
        if kind == "lines":
            why = check_lines(path, want)
        elif kind in ("csv", "csv-stable"):
            why = check_csv(path, want, kind == "csv-stable")
        else:
            raise SystemExit(f"unknown kind {kind!r}")
        print(f"{path} ok" if why is None else f"{path} FAILED: {why}", flush=True)
        failed |= why is not None
    return 1 if failed else 0


def main():
    what = sys.argv[1]
    if what == "check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    sort = {"duckdb": duckdb_sort, "polars": polars_sort, "polars-lazy": polars_lazy_sort}[what]
    print(f"{sort(sys.argv[2], sys.argv[3]):.3f}")


if __name__ == "__main__":
    main()
