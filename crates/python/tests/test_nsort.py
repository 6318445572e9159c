"""Nsort's record selection (-condition, -include, -omit), derived fields, -reformat, separated
records and -merge, checked against a reference written here, apart from xsort's code: random records, random conditions, each run
through the xsort command, the nsort command (a link named nsort) and Sorter(spec=...)."""

import os
import random
import re
import struct
import subprocess
import sys

import pytest

import xsort

BIN = os.path.dirname(sys.executable)
RNG_SEEDS = range(12)


def decimal_value(text):
    """A number written as text as Nsort's decimal fields read it: leading blanks, a sign, digits,
    a point and digits; text that is no number is zero."""
    m = re.match(rb"[ \t]*([+-]?)(\d*)(\.\d*)?", text)
    sign, whole, fraction = m.group(1), m.group(2), m.group(3) or b""
    if not whole and len(fraction) <= 1:
        return 0
    if not fraction:
        return int(sign + whole)
    return float(sign + (whole or b"0") + fraction)


def compare(left, op, right):
    return {
        "eq": left == right,
        "ne": left != right,
        "lt": left < right,
        "le": left <= right,
        "gt": left > right,
        "ge": left >= right,
    }[op]


def reformat(rng, names, keys):
    """A random -reformat: the key fields and some others, in a random order."""
    chosen = list(keys) + [n for n in names if n not in keys and rng.random() < 0.5]
    rng.shuffle(chosen)
    return chosen


class Fixed:
    """24-byte records: name (6 characters), n (4-byte big-endian integer), d (6-byte decimal
    text), f (8-byte little-endian double)."""

    SPEC = (
        "-format=size:24 -field=name:name,size:6 -field=name:n,int,big_endian "
        "-field=name:d,size:6,decimal -field=name:f,double,little_endian"
    )

    @staticmethod
    def record(rng):
        name = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 6))).ljust(6).encode()
        n = rng.randint(-50, 50)
        d = rng.choice(["", "-", "x", f"{rng.randint(-99, 99)}", f"{rng.uniform(-99, 99):.1f}"]).rjust(6).encode()
        f = rng.choice([rng.uniform(-10, 10), 0.0, -0.0, 2.5])
        return name + struct.pack(">i", n) + d + struct.pack("<d", f)

    PLACES = {"name": (0, 6), "n": (6, 10), "d": (10, 16), "f": (16, 24)}

    @staticmethod
    def rewrite(rec, names):
        return b"".join(rec[Fixed.PLACES[n][0] : Fixed.PLACES[n][1]] for n in names)

    @staticmethod
    def fields(rec):
        return {
            "name": rec[:6],
            "n": struct.unpack(">i", rec[6:10])[0],
            "d": decimal_value(rec[10:16]),
            "f": struct.unpack("<d", rec[16:24])[0],
        }

    @staticmethod
    def atom(rng):
        kind = rng.choice(["name", "n", "d", "f", "match"])
        op = rng.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        if kind == "name":
            text = "".join(rng.choice("abc") for _ in range(rng.randint(1, 4)))
            # A text constant is padded with blanks to the field's size.
            return f"name {op} '{text}'", lambda v: compare(v["name"], op, text.encode().ljust(6))
        if kind == "match":
            pattern = rng.choice(["^a", "b", "c c", "^ *$", "[ab]{2}"])
            return f"name matches '{pattern}'", lambda v: re.search(pattern.encode(), v["name"]) is not None
        const = rng.choice([rng.randint(-60, 60), round(rng.uniform(-60, 60), 1)])
        return f"{kind} {op} {const}", lambda v: compare(v[kind], op, const)


class Separated:
    """Comma-separated lines of up to four columns: a, b (characters) and n (a decimal)."""

    SPEC = "-format=separator:comma -field=name:a -field=name:b -field=name:n,decimal"

    @staticmethod
    def record(rng):
        cols = [rng.choice(["", "x", "y", "xy", "yx", "z"]), rng.choice(["", "p", "q", "pq"]), rng.choice(["", "-3", "7", "1.5", "abc"])]
        cols += [rng.choice(["", "tail"])]
        return ",".join(cols[: rng.randint(1, 4)]).encode()

    @staticmethod
    def fields(rec):
        cols = rec.split(b",") + [b""] * 4
        return {"a": cols[0], "b": cols[1], "n": decimal_value(cols[2])}

    @staticmethod
    def atom(rng):
        kind = rng.choice(["a", "b", "n", "match"])
        op = rng.choice(["eq", "ne", "lt", "le", "gt", "ge", "=", "!=", "<", ">="])
        word = {"=": "eq", "!=": "ne", "<": "lt", ">=": "ge"}.get(op, op)
        if kind == "match":
            pattern = rng.choice(["^x", "y$", "^$", "."])
            return f"a matches '{pattern}'", lambda v: re.search(pattern.encode(), v["a"]) is not None
        if kind == "n":
            const = rng.choice([0, 7, -3, 1.5, 2])
            return f"n {op} {const}", lambda v: compare(v["n"], word, const)
        text = rng.choice(["", "x", "xy", "p", "q"])
        return f"{kind} {op} '{text}'", lambda v: compare(v[kind], word, text.encode())


def condition(rng, layout, depth=0):
    """A random condition: its text, and the reference's test of a record's fields."""
    if depth >= 2 or rng.random() < 0.4:
        return layout.atom(rng)
    form = rng.choice(["and", "or", "not"])
    if form == "not":
        text, test = condition(rng, layout, depth + 1)
        return f"not ({text})", lambda v: not test(v)
    (lt, ltest), (rt, rtest) = condition(rng, layout, depth + 1), condition(rng, layout, depth + 1)
    if form == "and":
        return f"({lt}) and ({rt})", lambda v: ltest(v) and rtest(v)
    return f"({lt}) or ({rt})", lambda v: ltest(v) or rtest(v)


def selection(rng, layout):
    """Random -condition/-include/-omit statements, and the reference's choice of a record."""
    statements, steps = [], []
    for i in range(rng.randint(1, 3)):
        text, test = condition(rng, layout)
        include = rng.random() < 0.5
        verb = "-include" if include else "-omit"
        if rng.random() < 0.5:
            statements.append(f"-condition=name:c{i},test:({text})")
            statements.append(f"{verb}=c{i}")
        else:
            statements.append(f"{verb}=({text})")
        steps.append((include, test))

    def keeps(values):
        for include, test in steps:
            if test(values):
                return include
        return not any(include for include, _ in steps)

    return statements, keeps


def run_command(program, args, cwd):
    done = subprocess.run([program, *args], cwd=cwd, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@pytest.fixture(params=["link", "script"])
def nsort(request, tmp_path):
    """The nsort command: a link named nsort to the binary, or the package's console script."""
    if request.param == "script":
        return os.path.join(BIN, "nsort")
    link = tmp_path / "nsort"
    link.symlink_to(os.path.join(os.path.dirname(xsort.__file__), "bin", "xsort"))
    return str(link)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_fixed_records_selected_as_the_reference_selects(tmp_path, nsort, seed):
    rng = random.Random(seed)
    records = [Fixed.record(rng) for _ in range(rng.randint(0, 400))]
    statements, keeps = selection(rng, Fixed)
    kept = [r for r in records if keeps(Fixed.fields(r))]
    # Stable: equal keys keep their input order.
    ordered = sorted(kept, key=lambda r: (r[:6], struct.unpack(">i", r[6:10])[0]))
    spec = [Fixed.SPEC, "-key=name", "-key=n", *statements]
    if seed % 2:
        names = reformat(rng, ["name", "n", "d", "f"], ["name", "n"])
        spec.append("-reformat=" + ",".join(names))
        ordered = [Fixed.rewrite(r, names) for r in ordered]
    want = b"".join(ordered)
    data = tmp_path / "in"
    data.write_bytes(b"".join(records))
    assert run_command(os.path.join(BIN, "xsort"), ["--spec", " ".join(spec), str(data)], tmp_path) == want, spec
    assert run_command(nsort, [*spec, str(data)], tmp_path) == want, spec
    with xsort.Sorter(spec=" ".join(spec)) as sorter:
        for i in range(0, len(records), 7):
            sorter.release(b"".join(records[i : i + 7]))
        sorter.finish()
        assert b"".join(sorter) == want, spec


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_separated_records_selected_as_the_reference_selects(tmp_path, nsort, seed):
    rng = random.Random(1000 + seed)
    records = [Separated.record(rng) for _ in range(rng.randint(0, 300))]
    statements, keeps = selection(rng, Separated)
    kept = [r for r in records if keeps(Separated.fields(r))]
    ordered = sorted(kept, key=lambda r: Separated.fields(r)["b"])
    spec = [Separated.SPEC, "-key=b", *statements]
    if seed % 2:
        # Missing columns are written empty.
        names = reformat(rng, ["a", "b", "n"], ["b"])
        spec.append("-reformat=" + ",".join(names))
        column = {"a": 0, "b": 1, "n": 2}
        ordered = [b",".join((r.split(b",") + [b""] * 3)[column[n]] for n in names) for r in ordered]
    want = b"".join(r + b"\n" for r in ordered)
    data = tmp_path / "in.csv"
    data.write_bytes(b"".join(r + b"\n" for r in records))
    assert run_command(os.path.join(BIN, "xsort"), ["--spec", " ".join(spec), str(data)], tmp_path) == want, spec
    # The same key by its column number, from the nsort command.
    spec[1] = "-key=position:2"
    assert run_command(nsort, [*spec, str(data)], tmp_path) == want, spec


def test_separated_keys_order_as_gnu_sort_does(tmp_path):
    rng = random.Random(7)
    lines = [f"{rng.choice('abc')},{rng.randint(-20, 20)},{rng.choice(['x', 'y', ''])}" for _ in range(500)]
    data = tmp_path / "in"
    data.write_text("\n".join(lines) + "\n")
    spec = "-format=separator:',' -field=name:k -field=name:n,integer -key=n,descending -key=k"
    got = run_command(os.path.join(BIN, "xsort"), ["--spec", spec, str(data)], tmp_path)
    want = subprocess.run(["sort", "-s", "-t,", "-k2,2nr", "-k1,1", str(data)], env={"LC_ALL": "C"}, capture_output=True).stdout
    assert got == want


def test_nsort_mixes_statements_with_posix_options(tmp_path, nsort):
    data, out = tmp_path / "in", tmp_path / "out"
    data.write_text("b 2\na 10\nc 1\n")
    run_command(nsort, ["-format=maximum_size:65535", "-k2n", "-T", str(tmp_path), "-o", str(out), str(data)], tmp_path)
    assert out.read_text() == "c 1\nb 2\na 10\n"


@pytest.mark.parametrize(
    "statements, message",
    [
        ("-include=(name eq 'abcdefg')", "longer than the 6-byte field"),
        ("-include=(n eq 'x')", "a number is compared with text"),
        ("-include=(n matches 'x')", "'matches' tests a character field"),
        ("-include=(nope eq 1)", "no field is named 'nope'"),
        ("-include=missing", "'missing' names no condition and no field"),
        ("-condition=name:a,test:(b) -condition=name:b,test:(a) -include=a", "names itself: a -> b -> a"),
        ("-include=(name matches '(')", "is not a regular expression"),
        ("-include=(name eq 'x'", "does not close"),
        ("-key=name -reformat=n,d", "the key's field 'name' is not among the -reformat fields"),
        ("-reformat=n,nope", "no -field is named 'nope'"),
    ],
)
def test_bad_conditions_are_clear_errors(tmp_path, statements, message):
    data = tmp_path / "in"
    data.write_bytes(b"\0" * 24)
    out = tmp_path / "out"
    done = subprocess.run([os.path.join(BIN, "xsort"), "--spec", f"{Fixed.SPEC} {statements}", "-o", str(out), str(data)], capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and not out.exists()


@pytest.mark.parametrize("seed", range(4))
def test_merge_of_sorted_inputs_is_their_sorted_union(tmp_path, nsort, seed):
    rng = random.Random(2000 + seed)
    key = lambda r: (r[:6], struct.unpack(">i", r[6:10])[0])
    inputs = []
    for i in range(rng.randint(1, 4)):
        records = sorted((Fixed.record(rng) for _ in range(rng.randint(0, 200))), key=key)
        path = tmp_path / f"in{i}"
        path.write_bytes(b"".join(records))
        inputs.append((path, records))
    # Stable: equal keys in the order of the inputs.
    want = b"".join(sorted((r for _, records in inputs for r in records), key=key))
    args = [Fixed.SPEC, "-key=name", "-key=n", "-merge", *(str(p) for p, _ in inputs)]
    assert run_command(nsort, args, tmp_path) == want
    lines = tmp_path / "lines"
    words = sorted(rng.choice(["a", "b", "c,1", "c,2", ""]) for _ in range(50))
    lines.write_text("".join(w + "\n" for w in words))
    done = subprocess.run([nsort, "-format=separator:comma", "-key=position:1", "-merge", str(lines), "-"], input=b"b\nc\n", capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"".join(w.encode() + b"\n" for w in sorted(words + ["b", "c"], key=lambda w: w.split(",")[0]))


def test_merge_names_the_first_record_out_of_order(tmp_path, nsort):
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.write_text("a\nc\n")
    bad.write_text("b\nd\nc\ne\n")
    out = tmp_path / "out"
    done = subprocess.run([nsort, "-format=delimiter:newline", "-merge", "-o", str(out), str(good), str(bad)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr == f"nsort: {bad}: record 3 (at byte 4) is out of order: -merge needs each input sorted by the keys\n"
    assert not out.exists()


@pytest.mark.parametrize("seed", range(6))
def test_derived_fields_as_the_reference_computes_them(tmp_path, nsort, seed):
    rng = random.Random(3000 + seed)
    records = [Fixed.record(rng) for _ in range(rng.randint(1, 300))]
    a, b = rng.randint(-5, 5), rng.randint(-100, 100)
    limit = rng.randint(-200, 200)
    # s = n * a + b (whole numbers), written as an 8-byte big-endian integer; t = d / 2 (a decimal
    # of 10 bytes); kept when s >= limit; written as s, name, t, sorted by s then name.
    spec = [
        Fixed.SPEC,
        f"-derived=name:s,integer,size:8,big_endian,value:(n * {a} + {b})",
        "-derived=name:t,decimal,size:10,value:(if d ge 0 then d / 2 else 0 - d)",
        f"-include=(s ge {limit})",
        "-reformat=s,name,t",
        "-key=s",
        "-key=name",
    ]
    rows = []
    for r in records:
        v = Fixed.fields(r)
        s = v["n"] * a + b
        if s < limit:
            continue
        d = v["d"]
        # Whole numbers divide to a whole quotient (d is not negative here: no rounding question).
        t = -d if d < 0 else d // 2 if isinstance(d, int) else d / 2
        rows.append((s, v["name"], t))
    rows.sort(key=lambda row: (row[0], row[1]))
    (tmp_path / "in").write_bytes(b"".join(records))
    got = run_command(nsort, [*spec, str(tmp_path / "in")], tmp_path)
    assert len(got) == 24 * len(rows), spec
    for i, (s, name, t) in enumerate(rows):
        rec = got[24 * i : 24 * i + 24]
        assert struct.unpack(">q", rec[:8])[0] == s and rec[8:14] == name, (i, spec)
        assert float(rec[14:24].decode()) == pytest.approx(float(t)), (i, rec, t, spec)


def test_derived_text_fields_of_separated_records(tmp_path, nsort):
    data = tmp_path / "in"
    data.write_text("Oslo,700000,3\nBergen,285000,9\nVik,2700,1\nAl,,\n")
    spec = [
        "-format=separator:comma",
        "-field=name:city",
        "-field=name:pop,integer",
        "-field=name:n,integer",
        "-derived=name:size,value:(if pop ge 100000 then 'big' else 'small')",
        "-derived=name:per,decimal,value:(if n eq 0 then 0 else pop / n)",
        "-reformat=size,city,per",
        "-key=size",
        "-key=per,descending",
    ]
    assert run_command(nsort, [*spec, str(data)], tmp_path) == b"big,Oslo,233333\nbig,Bergen,31666\nsmall,Vik,2700\nsmall,Al,0\n"


@pytest.mark.parametrize(
    "derived, message",
    [
        ("-derived=name:s,integer,size:1,value:(n * 100)", "record 1: derived field 's': 300 does not fit in a 1-byte integer"),
        ("-derived=name:s,integer,value:(n / 0)", "derived field 's': NaN is not a number it can hold"),
        ("-derived=name:s,size:2,value:('abc')", "derived field 's': 'abc' is longer than its 2 bytes"),
    ],
)
def test_derived_values_that_do_not_fit_are_errors(tmp_path, derived, message):
    data, out = tmp_path / "in", tmp_path / "out"
    data.write_bytes(b"ab    " + struct.pack(">i", 3) + b"     1" + struct.pack("<d", 0.5))
    spec = f"{Fixed.SPEC} {derived} -reformat=s,name -key=name"
    done = subprocess.run([os.path.join(BIN, "xsort"), "--spec", spec, "-o", str(out), str(data)], capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr and str(data) in done.stderr, done.stderr
    assert not out.exists()


def packed(v, size):
    """v as a packed decimal of size bytes (2 * size - 1 digits, the sign nibble last)."""
    nibbles = [int(c) for c in str(abs(v)).rjust(2 * size - 1, "0")] + [0xD if v < 0 else 0xC]
    return bytes((nibbles[i] << 4) | nibbles[i + 1] for i in range(0, len(nibbles), 2))


def zoned(v, size):
    """v as an ASCII zoned decimal of size bytes (the last byte's zone 7 when negative)."""
    digits = str(abs(v)).rjust(size, "0").encode()
    return digits[:-1] + bytes([(0x70 if v < 0 else 0x30) | (digits[-1] & 15)])


@pytest.mark.parametrize("seed", range(3))
def test_packed_zoned_and_month_fields(tmp_path, nsort, seed):
    rng = random.Random(4000 + seed)
    months = ["JAN", "feb", "Mar", "apr", "MAY", "xyz", "   ", "Dec"]
    rows = [(rng.randint(-99999, 99999), rng.randint(-9999, 9999), rng.choice(months)) for _ in range(rng.randint(1, 300))]
    records = [packed(p, 3) + zoned(z, 4) + m.encode() for p, z, m in rows]
    data = tmp_path / "in"
    data.write_bytes(b"".join(records))
    fields = "-format=size:10 -field=name:p,packed,size:3 -field=name:z,zoned,size:4 -field=name:m,month,size:3"
    names = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    month = lambda m: names.index(m.upper()) + 1 if m.upper() in names else 0
    cases = [
        (["-key=p"], lambda r: r[0], lambda r: True),
        (["-key=z,descending"], lambda r: -r[1], lambda r: True),
        (["-key=m", "-key=p"], lambda r: (month(r[2]), r[0]), lambda r: True),
        (["-key=p", "-include=(z lt 0 and m ge 3)"], lambda r: r[0], lambda r: r[1] < 0 and month(r[2]) >= 3),
    ]
    for statements, key, keep in cases:
        order = sorted((i for i, r in enumerate(rows) if keep(r)), key=lambda i: key(rows[i]))
        want = b"".join(records[i] for i in order)
        assert run_command(nsort, [fields, *statements, str(data)], tmp_path) == want, statements
