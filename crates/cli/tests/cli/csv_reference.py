#!/usr/bin/env python3
"""Differential tester of xsort's CSV mode (`--csv`, `--tsv`, `--csv-separator=C`) against an
independent reference written here, in Python 3 with its standard library only.

For each seed it writes random delimited files (quoted and unquoted fields, embedded separators,
doubled quotes, `\\n`, `\\r\\n` and bare `\\r` inside quotes, CRLF and LF record endings mixed,
empty fields, short and long records, blank records, non-ASCII UTF-8, numeric columns with ties,
a last record without its newline, two header records) and, for each of a fixed set of option
combinations plus a few random ones, computes the expected output itself and compares it byte for
byte with what `xsort -o OUT` wrote:

- the generator builds each record's raw bytes as it writes them, so it knows every record's bytes
  and field values; Python's `csv` module must parse the file back to the same values (this checks
  the generator's own quoting, not xsort);
- the reference sorts with GNU sort's key semantics applied to the fields' unquoted values: KEYDEF
  fields and character positions, flags b d f n r M, global flags inherited by keys without flags
  of their own, ties broken by the whole record's raw bytes (reversed by a global -r), -s, -u,
  --header[=N] (headers of later inputs dropped), `-k NAME[:FLAGS]`.

Besides plain sorts: merges (-m) of inputs the reference sorted first; -c on the expected output
(exit 0, silent) and on it with two adjacent unequal records swapped (exit 1, naming the file);
now and then a file past the smallest memory budget (-S 256K --batch-size 2: runs and merges).
Every run's TMPDIR must be empty afterwards.

It also checks the error cases (an unclosed quote, a stray quote under --strict, each alone or in
a second input, a second input whose header differs, `-k NAME` without --header): exit status 2,
a message naming the file (and the line), and nothing at the `-o` target.

Self-check: `--check-reference` runs GNU sort (`--sort PATH`, default `sort`) instead of xsort, on
files that have no quotes and no CR, where `sort -t SEP` must give exactly the reference's order;
that validates the key, flag and tie-break semantics of the reference.

On a mismatch it prints the seed, the options, the first differing output record (both sides' raw
bytes) and a minimized input, keeps the files, and exits 1.

Speed: every xsort run is a process start (some 10 ms), so each seed runs half of the fixed cases
(`--rotate 2`: the next seed the other half), a few random ones, two -c checks and half of the
error cases; `--rotate 1 --random-cases 20 --checks 10 --seeds 300` is a thorough run.

Usage: csv_reference.py --xsort PATH [--seeds N] [--seed-base S] [--only-seed S] [--check-reference]
"""

import argparse
import concurrent.futures
import csv
import functools
import io
import multiprocessing
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

# GNU sort's blanks in the C locale: isblank() and newline (its `field_sep`); -b, -n and -M skip them.
BLANKS = b" \t\n"
MONTHS = [b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV", b"DEC"]
# Column layout of every generated table (the header's names; a NAME key picks one of them).
# (`codes` has CODE_MIN bytes: a header read as data keeps character positions inside the field.)
NAMES = [b"id", b"name", b"price", b"codes", b"month", b"note"]
UNITS = [b"#", b"text", b"EUR", b"AA000", b"mon", b"free, text"]
COL_ID, COL_NAME, COL_PRICE, COL_CODE, COL_MONTH, COL_NOTE = range(1, 7)
# The shortest `code` value: keys with character positions stay inside it, where "count bytes of
# the unquoted value" and GNU's positions on the joined values cannot differ.
CODE_MIN = 5

DIALECTS = {
    "csv": (b",", ["--csv"]),
    "tsv": (b"\t", ["--tsv"]),
    "semi": (b";", ["--csv-separator=;"]),
    "pipe": (b"|", ["--csv-separator=|"]),
}

RUN_TIMEOUT = 60


# ------------------------------------------------------------------------------------------------
# Tables: records as values and raw bytes


class Record:
    """One record: its fields' raw bytes (quoted or not) and values, and its line ending."""

    __slots__ = ("raw_fields", "values", "crlf")

    def __init__(self, raw_fields, values, crlf):
        self.raw_fields = raw_fields
        self.values = values
        self.crlf = crlf


class Table:
    """One input file: header records (0, 1 or 2; whether they are a header is up to the options),
    body records, and whether the last record ends with a newline."""

    def __init__(self, sep, header, body, final_newline, name="in.csv"):
        self.sep = sep
        self.header = header
        self.body = body
        self.final_newline = final_newline
        self.name = name
        self._rendered = None
        self._layout = None

    def with_body(self, body):
        return Table(self.sep, self.header, body, self.final_newline, self.name)

    def render(self):
        """The file's bytes and its records as (raw bytes without the final newline, values)."""
        if self._rendered is None:
            self._rendered = self._render()
        return self._rendered

    def layout(self):
        """Per record: raw bytes, values, the values joined by the separator, and where each
        value starts in that joined line (what keys are cut from)."""
        if self._layout is None:
            self._layout = []
            for raw, values in self.render()[1]:
                starts, pos = [], 0
                for v in values:
                    starts.append(pos)
                    pos += len(v) + len(self.sep)
                self._layout.append((raw, values, self.sep.join(values), starts))
        return self._layout

    def _render(self):
        out = bytearray()
        recs = []
        records = self.header + self.body
        for i, r in enumerate(records):
            joined = self.sep.join(r.raw_fields)
            # A last record without its newline ends where the file ends (its CR would be a bare
            # CR at the end of input, which the semantics leave open, so there is none); an empty
            # one would vanish, so it keeps its newline, and so does a header with nothing after
            # it (a later input's header must be byte-equal to the first's, one cut short is not).
            if i == len(records) - 1 and not self.final_newline and joined and self.body:
                raw = joined
                out += raw
            else:
                raw = joined + (b"\r" if r.crlf else b"")
                out += raw + b"\n"
            recs.append((raw, r.values))
        return bytes(out), recs


def check_with_csv_module(data, sep, recs, what):
    """Python's csv module must read the generator's file as the same field values."""
    text = data.decode("latin-1")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep.decode("latin-1"), quotechar='"', doublequote=True, strict=False))
    got = [[f.encode("latin-1") for f in row] or [b""] for row in rows]
    want = [v for _, v in recs]
    if got != want:
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                break
        else:
            i = min(len(got), len(want))
        sys.stderr.write(
            f"GENERATOR BUG ({what}): csv module reads record {i} as {got[i] if i < len(got) else None!r}, "
            f"generator meant {want[i] if i < len(want) else None!r} ({len(got)} vs {len(want)} records)\n"
        )
        sys.exit(3)


# ------------------------------------------------------------------------------------------------
# Random values

WORDS = [
    b"apple", b"Apple", b"APPLE", b"banana", b"b", b"B", b"zeta", b"Zeta", b"a", b"ab", b"abc", b"_under",
    b"[br", b"^hat", b"`tick", b"x-y", b"x.y", b"0", b"10", b"9", b"~tilde", b"{brace", b"Mar", b"z",
    b"#hash", b"apple2", b"Banana", b"@at",
]
UTF8_WORDS = [w.encode() for w in ["é", "éclair", "Ärger", "ñu", "日本", "Ωmega", "naïve", "😀", "zürich", "ß", "ÿ", "Ĳ"]]
MONTH_VALUES = [
    b"Jan", b"JAN", b"jan", b"January", b"feb", b"Feb ", b"  mar", b"Mar", b"apr", b"May", b"jun", b"JUL",
    b"aug", b"sep", b"Sept", b"oct", b"nov", b"DEC", b"dec", b"Dez", b"xyz", b"", b"13", b"ja", b"\tJun",
]


class Gen:
    """Random values and records. `plain`: nothing that needs quotes and no CR (the files GNU sort
    must order like the reference); `lenient`: also quotes inside unquoted fields (`ab"c`)."""

    def __init__(self, rng, sep, plain=False, lenient=False):
        self.rng = rng
        self.sep = sep
        self.plain = plain
        self.lenient = lenient

    def text(self):
        rng = self.rng
        out = bytearray()
        if rng.random() < 0.15:
            out += rng.choice([b" ", b"  ", b"\t", b" \t"])
        for i in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
            if i:
                out += rng.choice([b" ", b" ", b"", b"-", b"  "])
            out += rng.choice(UTF8_WORDS) if rng.random() < 0.15 else rng.choice(WORDS)
            if not self.plain and rng.random() < 0.25:
                out += self.special(has_nonblank=any(c not in BLANKS for c in out))
        if rng.random() < 0.1:
            out += b" "
        return bytes(out)

    def special(self, has_nonblank):
        """Bytes that need quoting (or, lenient, a stray quote). A newline comes only after a
        non-blank byte: a value that starts with blanks and a newline would make -b and -n depend
        on whether newline is a blank (GNU: it is), which the CSV semantics leave open."""
        rng = self.rng
        choices = [b",", b";", b"\t", b"|", b'"', b'""', b'"x"']
        if has_nonblank:
            choices += [b"\n", b"\r\n", b"\n\n", b"\r"]
        return rng.choice(choices)

    def number(self):
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            return str(rng.randint(-15, 30)).encode()
        if r < 0.6:
            return f"{rng.randint(-9, 20)}.{rng.choice(['0', '5', '50', '25', '05', '1', '10'])}".encode()
        return rng.choice([
            b"-0", b"0", b"", b".5", b"-.5", b"5.", b" 12", b"\t7", b"  -3", b"12abc", b"abc", b"+5", b"1e3",
            b"007", b"-007", b"3.50", b"3.5", b"--3", b"- 3", b"1.2.3", b"123456789012345678901234567890",
            b"-0.0", b"0.10", b"0.1", b"-", b".", b"1,5", b"2;5", b"1\t5", b"8|9", b"4\n2", b"-12.75",
        ])

    def code(self):
        rng = self.rng
        v = rng.choice([b"AB", b"Ab", b"BA", b"B_", b"aB"]) + bytes(rng.choice(b"0129") for _ in range(3))
        return v + rng.choice([b"", b"", b"", b"x", b",z", b'"q', b" y", b"\n1", b"7"])

    def value(self, col):
        rng = self.rng
        for _ in range(100):
            if col == COL_ID:
                v = rng.choice([str(rng.randint(0, 40)).encode(), b"0" + str(rng.randint(0, 9)).encode(), str(-rng.randint(1, 5)).encode()])
            elif col == COL_PRICE:
                v = self.number()
            elif col == COL_CODE:
                v = self.code()
            elif col == COL_MONTH:
                v = rng.choice(MONTH_VALUES)
            else:
                v = self.text()
            if not self.plain or not any(c in v for c in (self.sep, b'"', b"\n", b"\r")):
                return v
        raise AssertionError("no plain value")

    def encode(self, value):
        """The raw field for `value`: quoted when it must be (or by chance), doubled quotes."""
        rng = self.rng
        if self.plain:
            return value
        must = self.sep in value or b"\n" in value or b"\r" in value
        if (self.lenient and b'"' in value and not must and not value.startswith(b'"') and rng.random() < 0.6):
            return value  # a stray quote inside an unquoted field: literal (an error only under --strict)
        if must or b'"' in value or rng.random() < 0.2:
            return b'"' + value.replace(b'"', b'""') + b'"'
        return value

    def record(self, values, crlf):
        return Record([self.encode(v) for v in values], list(values), crlf)

    def table(self, n, header_records=2, crlf_mode=None, name="in.csv", header=None):
        rng = self.rng
        crlf_mode = crlf_mode or ("lf" if self.plain else rng.choice(["lf", "crlf", "mixed", "mixed"]))

        def crlf():
            return crlf_mode == "crlf" or (crlf_mode == "mixed" and rng.random() < 0.5)

        if header is None:
            rows = [NAMES, UNITS][:header_records]
            header = [self.record([v.replace(self.sep, b" ") if self.plain else v for v in row], crlf()) for row in rows]
        body = []
        for _ in range(n):
            r = rng.random()
            if body and r < 0.1:
                # A duplicate (quoted anew): ties on every key, and sometimes on the raw bytes too.
                values = list(rng.choice(body).values)
            elif r < 0.12 and not self.plain:
                values = [b""]  # a blank record (one empty field)
            else:
                values = [self.value(c) for c in range(1, 7)]
                s = rng.random()
                if s < 0.08:
                    values = values[: rng.randint(1, 5)]  # a short record
                elif s < 0.12:
                    values.append(self.value(COL_NOTE))  # a long one
                elif s < 0.15:
                    values[-1] = b""  # an empty last field
            body.append(self.record(values, crlf()))
        final_newline = rng.random() < 0.75
        return Table(self.sep, header, body, final_newline, name)


# ------------------------------------------------------------------------------------------------
# Options: a model that renders to xsort's and GNU sort's arguments

KEY_FLAGS = "bdfnrM"


class Key:
    """A KEYDEF: fields f1 (c1: 1-based byte, 0 = none) to f2 (None: end of record; c2 0: end of
    field), ordering flags, and where each flag is written (b before the comma is the start's)."""

    def __init__(self, f1, c1=0, f2=None, c2=0, sflags="", eflags="", name=None):
        self.f1, self.c1, self.f2, self.c2 = f1, c1, f2, c2
        self.sflags, self.eflags = sflags, eflags
        self.name = name  # set for `-k NAME:FLAGS`: a whole field

    @property
    def flags(self):
        return set(self.sflags) | set(self.eflags)

    def keydef(self):
        s = f"{self.f1}" + (f".{self.c1}" if self.c1 else "") + self.sflags
        if self.f2 is not None:
            s += f",{self.f2}" + (f".{self.c2}" if self.c2 else "") + self.eflags
        return s


class Spec:
    """One option combination: dialect, keys, global flags (r s u, and b f n M inherited by keys
    without flags), --header=N (0: none), --strict."""

    def __init__(self, dialect, keys, glob="", header=0, strict=False, header_form=None, name_forms=None, extra=()):
        self.dialect = dialect
        self.extra = list(extra)  # more options for both programs (-m, -S, --batch-size)
        self.keys = keys
        self.glob = glob
        self.header = header
        self.strict = strict
        self.header_form = header_form
        self.name_forms = name_forms or {}

    def xsort_args(self):
        args = list(DIALECTS[self.dialect][1])
        if self.strict:
            args.append("--strict")
        if self.header:
            args.append(self.header_form or ("--header" if self.header == 1 else f"--header={self.header}"))
        for g in self.glob:
            args.append("-" + g)
        for i, k in enumerate(self.keys):
            if k.name is not None:
                flags = "".join(sorted(k.flags, key=KEY_FLAGS.index))
                word = k.name.decode() + (":" + flags if flags else "")
                form = self.name_forms.get(i, "-k")
                args += ([f"--key={word}"] if form == "--key" else [f"-k{word}"] if form == "-kX" else ["-k", word])
            else:
                args += ["-k", k.keydef()]
        return args + self.extra

    def gnu_args(self):
        args = ["-t", DIALECTS[self.dialect][0].decode()]
        for g in self.glob:
            args.append("-" + g)
        for k in self.keys:
            if k.name is not None:
                col = NAMES.index(k.name) + 1
                flags = "".join(sorted(k.flags, key=KEY_FLAGS.index))
                args += ["-k", f"{col},{col}{flags}"]
            else:
                args += ["-k", k.keydef()]
        return args + self.extra


def shell(args):
    return " ".join(shlex.quote(a) for a in args)


# ------------------------------------------------------------------------------------------------
# The reference


def num_value(text):
    """GNU -n in the C locale: blanks, an optional '-', digits, an optional '.' and digits; the
    rest is ignored; nothing numeric is 0 (so '', '-', 'abc', '+5' are all 0)."""
    m = _NUMBER.match(text)
    # A Decimal made from a string is exact, and so are its comparisons (1.50 == 1.5, -0 == 0).
    return Decimal((b"%s%s.%s0" % (m.group(1), m.group(2) or b"0", m.group(3) or b"")).decode())


_NUMBER = re.compile(rb"[ \t\n]*(-?)([0-9]*)(?:\.([0-9]*))?")


def month_value(text):
    s = text.lstrip(BLANKS)[:3].upper()  # bytes.upper() is ASCII-only, as toupper in the C locale
    return MONTHS.index(s) + 1 if len(s) == 3 and s in MONTHS else 0


_DICT_KEEP = bytes(c for c in range(256) if (chr(c).isascii() and chr(c).isalnum()) or c in BLANKS)


def effective_keys(spec):
    """Each key's flags as GNU applies them: a key with no ordering flag of its own (b, d, f, n,
    M, r) takes the global ones; a global -b is the start's and the end's."""
    glob = set(spec.glob) & set("bdfnM")
    out = []
    for k in spec.keys:
        if k.flags & set(KEY_FLAGS):
            sb = "b" in k.sflags or (k.name is not None and "b" in k.flags)
            eb = "b" in k.eflags
            fl = k.flags
        else:
            sb = eb = "b" in glob
            fl = set(glob) | ({"r"} if "r" in spec.glob else set())
        out.append((k, sb, eb, fl))
    return out


def column_of(spec, key, header_values):
    if key.name is None:
        return key
    col = header_values.index(key.name) + 1
    return Key(col, 0, col, 0, key.sflags, key.eflags)


def key_text(values, line, starts, key, sb, eb):
    """The key's bytes: GNU's begfield/limfield over the record's unquoted values joined by the
    separator (`line`), with fields found by index (a separator inside a quoted value does not
    split)."""
    lim = len(line)
    n = len(values)

    p = starts[key.f1 - 1] if key.f1 - 1 < n else lim
    if sb:
        while p < lim and line[p] in BLANKS:
            p += 1
    p = min(lim, p + (key.c1 - 1 if key.c1 else 0))

    if key.f2 is None:
        e = lim
    elif key.c2 == 0:
        e = starts[key.f2 - 1] + len(values[key.f2 - 1]) if key.f2 - 1 < n else lim
    else:
        e = starts[key.f2 - 1] if key.f2 - 1 < n else lim
        if eb:
            while e < lim and line[e] in BLANKS:
                e += 1
        e = min(lim, e + key.c2)
    return line[p:max(p, e)]


def sort_key_of(text, flags):
    """What a key compares: GNU applies -d and -f to the text first, then -n, -M or bytes."""
    if "d" in flags:
        text = bytes(c for c in text if c in _DICT_KEEP)
    if "f" in flags:
        text = text.upper()
    if "n" in flags:
        return num_value(text)
    if "M" in flags:
        return month_value(text)
    return text


class Ref:
    """The reference's answer: the output bytes (`want`), its records (`recs`, header first), the
    header's record count (`h`), the sorted body as (keys, raw bytes, index among the inputs'
    records after their headers) (`items`), and whether ties fall to the raw bytes."""

    def __init__(self, want, recs, h, items, last_resort):
        self.want, self.recs, self.h, self.items, self.last_resort = want, recs, h, items, last_resort

    def strictly_ordered(self, a, b):
        """Whether sorted items a, b (a first) compare unequal (so that b, a is disorder)."""
        return a[0] != b[0] or (self.last_resort and a[1] != b[1])


def reference(spec, tables, via_cmp=False):
    """What `xsort SPEC TABLES` must write, as a Ref.

    The order: Python's stable sort, one pass per key from the last to the first, each with its
    own `reverse` (which keeps equal items in order, so a key's r reverses that key only), after a
    first pass on the raw bytes when ties are broken by them (reversed by a global -r). `via_cmp`
    sorts once with a comparator (functools.cmp_to_key) instead: slower, and --check-reference
    checks that both give the same order."""
    layouts = [t.layout() for t in tables]
    h = spec.header
    header_recs = layouts[0][:h] if h else []
    header_values = header_recs[0][1] if header_recs else None
    body = [rec for lay in layouts for rec in lay[h:]]

    keys = []
    for k, sb, eb, fl in effective_keys(spec):
        keys.append((column_of(spec, k, header_values), sb, eb, fl))
    items = []
    for idx, (raw, values, line, starts) in enumerate(body):
        ks = tuple(sort_key_of(key_text(values, line, starts, k, sb, eb), fl) for k, sb, eb, fl in keys)
        items.append((ks, raw, idx))
    revs = [("r" in fl) for _, _, _, fl in keys]
    last_resort = not ("s" in spec.glob or "u" in spec.glob)
    global_r = "r" in spec.glob

    def cmp_keys(a, b):
        for x, y, r in zip(a[0], b[0], revs):
            if x != y:
                d = -1 if x < y else 1
                return -d if r else d
        return 0

    def cmp(a, b):
        d = cmp_keys(a, b)
        if d or not last_resort:
            return d
        if a[1] == b[1]:
            return 0
        d = -1 if a[1] < b[1] else 1
        return -d if global_r else d

    if via_cmp:
        items.sort(key=functools.cmp_to_key(cmp))  # stable: equal records keep input order
    else:
        if last_resort:
            items.sort(key=lambda it: it[1], reverse=global_r)
        for i in reversed(range(len(keys))):
            items.sort(key=lambda it: it[0][i], reverse=revs[i])
    if "u" in spec.glob:
        kept = []
        for it in items:
            if not kept or kept[-1][0] != it[0]:
                kept.append(it)
        items = kept
    out_recs = [rec[0] for rec in header_recs] + [it[1] for it in items]
    return Ref(b"".join(r + b"\n" for r in out_recs), out_recs, h, items, last_resort)


def sorted_tables(spec, tables):
    """Each table sorted on its own by `spec` (without -u): the inputs of a merge (-m)."""
    nu = Spec(spec.dialect, spec.keys, spec.glob.replace("u", ""), spec.header, name_forms=spec.name_forms)
    out = []
    for t in tables:
        # Sorted by the records' bytes as they are when followed by a newline; the last one goes
        # without only where that leaves its bytes alone (no CR to lose), so the file stays sorted.
        ended = Table(t.sep, t.header, t.body, True, t.name)
        records = (t.header + t.body)[spec.header:]
        body = [records[it[2]] for it in reference(nu, [ended]).items]
        final_newline = t.final_newline or not body or body[-1].crlf
        out.append(Table(t.sep, t.header[: spec.header], body, final_newline, t.name))
    return out


# ------------------------------------------------------------------------------------------------
# Running xsort (or GNU sort) and comparing


def split_output(data):
    """The records of an output, each ended by a newline outside quotes (quotes toggle; good for
    showing a difference, not a parser)."""
    recs, start, quoted = [], 0, False
    for i, c in enumerate(data):
        if c == 0x22:
            quoted = not quoted
        elif c == 0x0A and not quoted:
            recs.append(data[start:i])
            start = i + 1
    if start < len(data):
        recs.append(data[start:])
    return recs


class Runner:
    """Runs the program under test in one directory at a time; counts the runs; collects what a
    seed has to say (seeds run in worker processes, their reports are printed in seed order)."""

    def __init__(self, args):
        self.args = args
        self.runs = 0
        self.log = []

    def say(self, text):
        self.log.append(text)

    def env(self, tmp):
        env = dict(os.environ)
        env["LC_ALL"] = "C"
        env["TMPDIR"] = tmp
        return env

    def run(self, argv, workdir):
        """xsort ARGV -o out.sorted in `workdir`: (exit status, output bytes or None, stderr,
        what was left in its TMPDIR)."""
        tmp = os.path.join(workdir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        out = os.path.join(workdir, "out.sorted")
        if os.path.exists(out):
            os.remove(out)
        self.runs += 1
        try:
            p = subprocess.run([self.args.xsort] + argv + ["-o", "out.sorted"], cwd=workdir, env=self.env(tmp),
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=RUN_TIMEOUT)
            rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            rc, err = -1, f"timed out after {RUN_TIMEOUT}s"
        except OSError as e:
            rc, err = -2, f"cannot run {self.args.xsort}: {e}"
        got = None
        if os.path.exists(out):
            with open(out, "rb") as f:
                got = f.read()
        return rc, got, err, os.listdir(tmp)

    def check(self, argv, workdir, gnu):
        """xsort (or GNU sort) with -c in ARGV, no output file: (exit status, stdout, stderr)."""
        self.runs += 1
        prog = self.args.sort if gnu else self.args.xsort
        try:
            p = subprocess.run([prog] + argv, cwd=workdir, env=self.env(workdir), stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return -1, b"", f"timed out after {RUN_TIMEOUT}s"
        except OSError as e:
            return -2, b"", f"cannot run {prog}: {e}"
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    def run_gnu(self, argv, workdir):
        self.runs += 1
        p = subprocess.run([self.args.sort] + argv, cwd=workdir, env=self.env(workdir), stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=RUN_TIMEOUT)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace"), []


def write_tables(workdir, tables, strip_header=0):
    """Writes the tables as files in `workdir` (without their first `strip_header` records, for
    GNU sort, which has no header); returns their names."""
    names = []
    for t in tables:
        if strip_header:
            t = Table(t.sep, t.header[strip_header:], t.body, t.final_newline, t.name)
        with open(os.path.join(workdir, t.name), "wb") as f:
            f.write(t.render()[0])
        names.append(t.name)
    return names


def outcome(runner, spec, tables, workdir, gnu, written=False):
    """(ok, details): runs the program on the tables (written to `workdir` unless `written`) and
    compares its output with the reference's."""
    ref = reference(spec, tables)
    want, want_recs = ref.want, ref.recs
    if gnu:
        # The comparator sort must agree with the pass-per-key sort.
        assert reference(spec, tables, via_cmp=True).want == want, f"the two reference sorts disagree: {shell(spec.xsort_args())}"
        names = write_tables(workdir, tables, strip_header=spec.header)
        argv = spec.gnu_args() + names
        rc, got, err, left = runner.run_gnu(argv, workdir)
        if rc == 0:
            got = b"".join(r + b"\n" for r in want_recs[: spec.header]) + got
        prog = [runner.args.sort]
    else:
        names = [t.name for t in tables] if written else write_tables(workdir, tables)
        argv = spec.xsort_args() + names
        rc, got, err, left = runner.run(argv, workdir)
        prog = ["xsort"]
    ok = rc == 0 and got == want and not left
    return ok, dict(want=want, want_recs=want_recs, got=got, rc=rc, err=err, left=left, argv=prog + argv, names=names, ref=ref)


def check_outcome(runner, spec, ref, workdir, gnu):
    """-c on the expected output must pass (exit 0, silent), and on it with two adjacent records
    that compare unequal swapped must fail (exit 1, naming the file). Returns the problems."""
    problems = []
    h = 0 if gnu else ref.h  # GNU sort has no header: its files go without
    head = ref.recs[:h]
    body = [it[1] for it in ref.items]
    swap = next((i for i in range(len(ref.items) - 1) if ref.strictly_ordered(ref.items[i], ref.items[i + 1])), None)
    files = [("sorted.csv", body, 0)]
    if swap is not None:
        files.append(("disorder.csv", body[:swap] + [body[swap + 1], body[swap]] + body[swap + 2:], 1))
    for name, recs, want_rc in files:
        with open(os.path.join(workdir, name), "wb") as f:
            f.write(b"".join(r + b"\n" for r in head + recs))
        argv = (spec.gnu_args() if gnu else spec.xsort_args()) + ["-c", name]
        rc, out, err = runner.check(argv, workdir, gnu)
        what = f"{shell(argv)}: "
        if rc != want_rc:
            swapped = f"; body records {swap}, {swap + 1} swapped: {body[swap + 1]!r} before {body[swap]!r}" if want_rc else ""
            problems.append(what + f"exit status {rc}, want {want_rc} (stderr {err.strip()!r})" + swapped)
        elif want_rc == 0 and (err or out):
            problems.append(what + f"says something on a sorted input: {err.strip()!r} {out!r}")
        elif want_rc == 1 and name not in err:
            problems.append(what + f"the disorder message does not name {name}: {err.strip()!r}")
    return problems


def first_difference(want_recs, got):
    got_recs = split_output(got or b"")
    for i in range(max(len(want_recs), len(got_recs))):
        w = want_recs[i] if i < len(want_recs) else None
        g = got_recs[i] if i < len(got_recs) else None
        if w != g:
            return i, w, g, len(got_recs)
    return None, None, None, len(got_recs)


def minimize(runner, spec, tables, workdir, gnu, budget=400):
    """Drops body records (halves, quarters, ... then one at a time) while the mismatch stays."""
    if not spec.header:
        # No header: the header records are data, and can go too.
        tables = [Table(t.sep, [], t.header + t.body, t.final_newline, t.name) for t in tables]
    items = [(ti, ri) for ti, t in enumerate(tables) for ri in range(len(t.body))]

    def build(sel):
        return [t.with_body([t.body[ri] for ti2, ri in sel if ti2 == ti]) for ti, t in enumerate(tables)]

    def fails(sel):
        return not outcome(runner, spec, build(sel), workdir, gnu)[0]

    chunk = max(1, len(items) // 2)
    tries = 0
    while tries < budget:
        i, removed = 0, False
        while i < len(items) and tries < budget:
            trial = items[:i] + items[i + chunk:]
            tries += 1
            if trial and fails(trial):
                items, removed = trial, True
            else:
                i += chunk
        if chunk == 1 and not removed:
            break
        if not removed:
            chunk = max(1, chunk // 2)
    return build(items)


def clip(b, n=400):
    text = repr(b)
    return text if len(text) <= n else text[:n] + f"... ({len(b)} bytes)"


def report_mismatch(runner, seed, case_name, spec, tables, workdir, info, gnu):
    out = []
    w = out.append
    w(f"MISMATCH seed={seed} case={case_name}{' (GNU sort vs the reference)' if gnu else ''}")
    w(f"  command (in {workdir}): LC_ALL=C {shell(info['argv'])}" + ("" if gnu else " -o out.sorted"))
    w(f"  exit status {info['rc']}; stderr: {info['err'].strip()!r}")
    if info["left"]:
        w(f"  left in TMPDIR: {info['left']}")
    i, wr, gr, ngot = first_difference(info["want_recs"], info["got"])
    if i is not None:
        w(f"  first difference at output record {i} ({len(info['want_recs'])} expected, {ngot} got):")
        w(f"    expected: {clip(wr)}")
        w(f"    got:      {clip(gr)}")
    mindir = os.path.join(workdir, "min-" + re.sub(r"[^A-Za-z0-9_.-]", "_", case_name)[:60])
    os.makedirs(mindir, exist_ok=True)
    small = minimize(runner, spec, tables, mindir, gnu)
    ok, minfo = outcome(runner, spec, small, mindir, gnu)
    if not ok:
        w(f"  minimized ({sum(len(t.body) for t in small)} body records), files in {mindir}:")
        w(f"    LC_ALL=C {shell(minfo['argv'])}" + ("" if gnu else " -o out.sorted"))
        for t in small:
            w(f"    {t.name}: {t.render()[0]!r}")
        w(f"    expected output: {minfo['want']!r}")
        w(f"    got output:      {minfo['got']!r} (exit {minfo['rc']}, stderr {minfo['err'].strip()!r})")
    else:
        w("  (the minimized input passes; see the kept input)")
    w(f"  input kept in {workdir}: {', '.join(info['names'])}\n")
    runner.say("\n".join(out))


# ------------------------------------------------------------------------------------------------
# Cases


def random_spec(rng, dialect, names_ok=True):
    """A random option combination within what the semantics pin down: character positions only
    inside the `code` column (at least CODE_MIN bytes, no leading blank); no -d with -n or -M (GNU
    would drop the sign and point first); under --tsv no blank-skipping start of a key that spans
    fields (GNU's -b would skip the tab itself)."""
    glob = ""
    for g, p in (("r", 0.3), ("s", 0.2), ("u", 0.2), ("f", 0.06), ("b", 0.06), ("n", 0.06)):
        if rng.random() < p:
            glob += g
    keys, name_forms = [], {}
    header = rng.choice([0, 0, 1, 2])
    for i in range(rng.choice([1, 1, 2, 2, 3])):
        r = rng.random()
        if names_ok and r < 0.15:
            name = rng.choice(NAMES)
            flags = rng.choice(["", "n", "r", "f", "nr", "fr", "M"])
            keys.append(Key(0, name=name, sflags=flags))
            name_forms[i] = rng.choice(["-k", "--key", "-kX"])
            header = 1
            continue
        col = rng.choice([1, 2, 3, 3, 4, 5, 6, 7])
        typ = {1: "nr", 3: "nnr", 5: "MMr"}.get(col, "")
        kind = rng.choice(["field"] * 5 + ["span", "toend", "chars"])
        other = rng.choice(["", "", "r", "f", "d", "fd", "fr"] + list(typ))
        if "n" in other or "M" in other:
            other = other.replace("d", "")
        sb = "b" if rng.random() < 0.2 else ""
        eb = "b" if rng.random() < 0.1 else ""
        if kind == "chars":
            c1 = rng.randint(1, CODE_MIN)
            c2 = rng.choice([0, rng.randint(c1, CODE_MIN)])
            k = Key(COL_CODE, c1, COL_CODE, c2)
        elif kind == "span":
            k = Key(col, 0, col + rng.randint(1, 2), 0)
        elif kind == "toend":
            k = Key(col, 0, None, 0)
        else:
            k = Key(col, 0, col, 0)
        spans = k.f2 is None or k.f2 != k.f1
        if dialect == "tsv" and spans:
            sb = ""
        if k.f2 is None:
            eb = ""
        # ordering flags go before or after the comma (GNU takes them on either side)
        if k.f2 is not None and rng.random() < 0.5:
            k.sflags, k.eflags = sb, other + eb
        else:
            k.sflags, k.eflags = sb + other, eb
        keys.append(k)
    if dialect == "tsv" and "b" in glob and any(k.f2 is None or k.f2 != k.f1 for k in keys if not k.flags and k.name is None):
        glob = glob.replace("b", "")
    if "n" in glob and "d" in glob:
        glob = glob.replace("d", "")
    return Spec(dialect, keys, glob, header, name_forms=name_forms)


def K(text):
    """A Key from KEYDEF text (for the fixed cases)."""
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?([a-zA-Z]*)(?:,(\d+)(?:\.(\d+))?([a-zA-Z]*))?", text)
    f1, c1, sf, f2, c2, ef = m.groups()
    return Key(int(f1), int(c1 or 0), int(f2) if f2 else None, int(c2 or 0), sf, ef or "")


def N(name, flags=""):
    return Key(0, name=name.encode(), sflags=flags)


def fixed_specs(other_dialect):
    """(case name, dataset, spec) for the fixed combinations."""
    return [
        ("n", "csv", Spec("csv", [K("3,3n")])),
        ("r+n", "csv", Spec("csv", [K("2,2r"), K("1,1n")])),
        ("f+nr", "csv", Spec("csv", [K("2,2f"), K("3,3nr")])),
        ("b-stable", "csv", Spec("csv", [K("2b,2")], "s")),
        ("n-unique", "csv", Spec("csv", [K("3,3n")], "u")),
        ("global-r", "csv", Spec("csv", [K("3,3n"), K("2,2")], "r")),
        ("global-r-stable", "csv", Spec("csv", [K("1,1"), K("5,5M")], "rs")),
        ("global-inherit", "csv", Spec("csv", [K("3,3"), K("2,2r")], "n")),
        ("header-name-n", "csv", Spec("csv", [N("price", "n")], "", 1, name_forms={0: "-k"})),
        ("header-key-name-r", "csv",
         Spec("csv", [N("name", "r"), N("id", "n")], "", 1, header_form="--header=1", name_forms={0: "--key", 1: "--key"})),
        ("header2", "csv", Spec("csv", [K("3,3n"), K("1,1")], "", 2)),
        ("span", "csv", Spec("csv", [K("2,3")])),
        ("to-end", "csv", Spec("csv", [K("2")])),
        ("to-end-b-r", "csv", Spec("csv", [K("4b")], "r")),
        ("chars", "csv", Spec("csv", [K("4.2,4.4"), K("4.3,4.5n")])),
        ("chars-b", "csv", Spec("csv", [K("4.2b,4.3b"), K("1.2,1")])),
        ("month", "csv", Spec("csv", [K("5,5M"), K("1,1n")])),
        ("dict-fold", "csv", Spec("csv", [K("2,2d"), K("6,6f")])),
        ("fold-dict-unique", "csv", Spec("csv", [K("6,6df")], "u")),
        ("strict", "csv", Spec("csv", [K("1,1n"), K("2,2")], "", strict=True)),
        ("beyond-last-field", "csv", Spec("csv", [K("7,7"), K("6,6")])),
        ("tsv", "tsv", Spec("tsv", [K("2,2"), K("3,3n")])),
        ("tsv-header-name", "tsv", Spec("tsv", [N("codes"), K("6,6r")], "", 1, name_forms={0: "-kX"})),
        ("sep", other_dialect, Spec(other_dialect, [K("3,3n"), K("2,2f")])),
        ("sep-r-unique", other_dialect, Spec(other_dialect, [K("6,6r")], "u")),
        ("multi-header", "multi", Spec("csv", [K("3,3n")], "", 1)),
        ("multi-header2-name", "multi", Spec("csv", [N("name", "f")], "rs", 1)),
        ("multi-no-header-unique", "multi", Spec("csv", [K("1,1n")], "u")),
        ("multi-header2", "multi", Spec("csv", [K("4,4"), K("2")], "", 2)),
        ("lenient", "lenient", Spec("csv", [K("2,2"), K("6,6")])),
        ("lenient-n", "lenient", Spec("csv", [K("6,6n")], "r")),
    ]


def datasets(seed, plain):
    """The seed's tables: csv (2 header records), tsv, a ';' or '|' one, three csv inputs sharing
    their header, and (not plain) a lenient csv with stray quotes."""
    rng = random.Random(seed)
    other = rng.choice(["semi", "pipe"])
    n = lambda: rng.randint(80, 250)  # noqa: E731
    ds = {}
    ds["csv"] = [Gen(rng, b",", plain).table(n(), name="in.csv")]
    ds["tsv"] = [Gen(rng, b"\t", plain).table(n(), name="in.tsv")]
    sep = DIALECTS[other][0]
    ds[other] = [Gen(rng, sep, plain).table(n(), name="in.txt")]
    g = Gen(rng, b",", plain)
    first = g.table(rng.randint(20, 100), name="a.csv")
    multi = [first]
    for name in ("b.csv", "c.csv"):
        multi.append(g.table(rng.randint(0 if rng.random() < 0.2 else 20, 100), name=name, header=first.header))
    ds["multi"] = multi
    if not plain:
        ds["lenient"] = [Gen(rng, b",", plain=False, lenient=True).table(n(), name="lenient.csv")]
    return ds, other


# ------------------------------------------------------------------------------------------------
# Error cases


def plain_lines(rng, n):
    """n single-line records (no quotes spanning lines), so record number = line number."""
    return b"".join(f"{rng.randint(0, 99)},w{rng.randint(0, 9)},{i}\n".encode() for i in range(n))


def error_cases(seed):
    """(case, files {name: bytes}, argv, the file the message must name, line numbers it may name)."""
    rng = random.Random(seed * 7919 + 1)
    cases = []

    def inputs(bad):
        """The bad file alone, or after a good one (the message must name the bad one)."""
        return ({"good.csv": plain_lines(rng, rng.randint(1, 5))} if rng.random() < 0.4 else {}) | {"bad.csv": bad}

    before = rng.randint(0, 20)
    tail = rng.choice([b"", b"more\nlines,x\n", b"z"])
    data = plain_lines(rng, before) + b'7,"unclosed ' + rng.choice([b"", b"a,b", b'x""y']) + b"\n" + tail
    last = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    # The line where the record (or its quote) starts, the last line, or the end of input after it.
    cases.append(("unclosed-quote", inputs(data), ["--csv", "-k1,1n"], "bad.csv", range(before + 1, last + 2)))

    for stray in (b'ab"c', b'"ab"c'):
        before = rng.randint(0, 20)
        data = plain_lines(rng, before) + b"1," + stray + b",2\n" + plain_lines(rng, rng.randint(0, 5))
        cases.append((f"strict-{stray.decode()}", inputs(data), ["--csv", "--strict", "-k2,2"], "bad.csv", [before + 1]))

    hdr = b"id,name,price\n"
    other = rng.choice([b"id,nom,price\n", b'id,"name",price\n', b"id,name\n"])
    body = plain_lines(rng, rng.randint(1, 10))
    files = {"first.csv": hdr + body, "second.csv": other + plain_lines(rng, 3)}
    cases.append(("header-differs", files, ["--csv", "--header", "-k1,1n", "first.csv", "second.csv"], "second.csv", None))

    cases.append(("name-without-header", {"in.csv": hdr + body}, ["--csv", "-k", "price:n"], None, None))
    return cases


def check_errors(runner, seed, workroot, cases):
    """Runs the seed's error cases (those of `cases`); returns how many failed (their files are
    kept)."""
    failures = 0
    for case, files, argv, named, lines in cases:
        workdir = os.path.join(workroot, f"s{seed}-err-{case}")
        os.makedirs(workdir, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(workdir, name), "wb") as f:
                f.write(data)
        full = argv if any(a in files for a in argv) else argv + list(files)
        rc, got, err, left = runner.run(full, workdir)
        problems = []
        if rc != 2:
            problems.append(f"exit status {rc}, want 2")
        if got is not None:
            problems.append(f"the -o target exists ({len(got)} bytes)")
        if left:
            problems.append(f"left in TMPDIR: {left}")
        if not err.strip():
            problems.append("nothing on stderr")
        if named and named not in err:
            problems.append(f"the message does not name {named}")
        if lines is not None and not any(re.search(rf"(?<![0-9]){n}(?![0-9])", err.replace(named, "")) for n in lines):
            problems.append(f"the message names none of the line numbers {list(lines)}")
        if problems:
            failures += 1
            runner.say(f"ERROR-CASE FAILURE seed={seed} case={case} (files kept in {workdir})\n"
                       f"  command: LC_ALL=C xsort {shell(full)} -o out.sorted\n"
                       + "".join(f"  {p}\n" for p in problems)
                       + f"  stderr: {err.strip()!r}\n"
                       + "".join(f"  {n}: {d!r}\n" for n, d in files.items()))
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return failures


def run_seed(args, seed, workroot):
    """Every case of one seed: (cases, runs, failures, report text)."""
    gnu = args.check_reference
    runner = Runner(args)
    ds, other = datasets(seed, plain=gnu)
    for tables in ds.values():
        for t in tables:
            data, recs = t.render()
            check_with_csv_module(data, t.sep, recs, f"seed {seed} {t.name}")
    rng = random.Random(seed ^ 0x5EED)
    # Each seed runs 1 in `rotate` of the fixed cases, the next seed the next ones: every xsort
    # run costs a process start (some 10 ms), and the seeds' data differ anyway.
    rot = args.rotate
    todo = [(n, d, s) for i, (n, d, s) in enumerate(fixed_specs(other))
            if (i + seed) % rot == 0 and d in ds and not (gnu and s.strict)]
    for i in range(args.random_cases):
        d = rng.choice(["csv", "csv", "tsv", other, "multi"] + ([] if gnu else ["lenient"]))
        spec = random_spec(rng, {"multi": "csv", "lenient": "csv"}.get(d, d))
        todo.append((f"random{i}", d, spec))
    # Merges (-m) of the three inputs, each sorted first by the reference under the same options.
    merges = [
        ("merge-header", Spec("csv", [K("3,3n")], "", 1, extra=["-m"])),
        ("merge-unique-r", Spec("csv", [K("2,2f"), K("1,1n")], "ur", extra=["-m"])),
        ("merge-random", random_spec(rng, "csv")),
    ]
    merges[2][1].extra.append("-m")
    for i, (name, spec) in enumerate(merges):
        if (i + seed) % min(rot, len(merges)) == 0:
            ds[f"merge{i}"] = sorted_tables(spec, ds["multi"])
            todo.append((name, f"merge{i}", spec))
    # Now and then a file past the smallest memory budget: sorted in runs, merged two at a time.
    if seed % 15 == 0:
        ds["big"] = [Gen(random.Random(seed), b",", gnu).table(12000, name="big.csv")]
        spill = ["-S", "256K", "--batch-size", "2"]
        todo.append(("big-spill", "big", Spec("csv", [K("2,2f"), K("3,3nr")], "", 1, extra=spill)))
        todo.append(("big-spill-stable", "big", Spec("csv", [K("4.2,4.4"), K("2")], "s", extra=spill)))

    # One directory per dataset, its files written once; kept when a case on it fails.
    dirs = {}
    if not gnu:
        for d, tables in ds.items():
            dirs[d] = os.path.join(workroot, f"s{seed}-{d}")
            os.makedirs(dirs[d])
            write_tables(dirs[d], tables)
    # -c on the expected output (and on it with two records swapped) for a few of the cases.
    checked = set(rng.sample(range(len(todo)), min(len(todo), args.checks)))
    cases = failures = 0
    keep = set()
    for n, (case_name, d, spec) in enumerate(todo):
        if failures >= args.max_failures:
            break
        cases += 1
        if gnu:
            dirs[d] = os.path.join(workroot, f"s{seed}-{d}")
            os.makedirs(dirs[d], exist_ok=True)
        ok, info = outcome(runner, spec, ds[d], dirs[d], gnu, written=not gnu)
        if not ok:
            failures += 1
            keep.add(d)
            report_mismatch(runner, seed, f"{case_name} [{shell(spec.xsort_args())}]", spec, ds[d], dirs[d], info, gnu)
        elif n in checked and "-m" not in spec.extra:
            problems = check_outcome(runner, spec, info["ref"], dirs[d], gnu)
            if problems:
                failures += 1
                keep.add(d)
                runner.say(f"CHECK FAILURE seed={seed} case={case_name} (files kept in {dirs[d]})\n"
                           + "".join(f"  {p}\n" for p in problems))
    for d, path in dirs.items():
        if d not in keep:
            shutil.rmtree(path, ignore_errors=True)
    if not gnu and failures < args.max_failures:
        errs = [c for i, c in enumerate(error_cases(seed)) if (i + seed) % rot == 0]
        cases += len(errs)
        failures += check_errors(runner, seed, workroot, errs)
    return cases, runner.runs, failures, "\n".join(runner.log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--xsort", help="the xsort binary under test")
    ap.add_argument("--seeds", type=int, default=30, help="how many seeds (default 30)")
    ap.add_argument("--seed-base", type=int, default=1, help="the first seed (default 1)")
    ap.add_argument("--only-seed", type=int, help="run this seed only")
    ap.add_argument("--random-cases", type=int, default=4, help="random option combinations per seed (default 4)")
    ap.add_argument("--rotate", type=int, default=2, help="each seed runs 1 in N of the fixed cases (default 2; 1: all)")
    ap.add_argument("--checks", type=int, default=2, help="cases per seed whose output is also checked with -c (default 2)")
    ap.add_argument("--check-reference", action="store_true", help="compare the reference with GNU sort on quote-free files")
    ap.add_argument("--sort", default="sort", help="GNU sort, for --check-reference")
    ap.add_argument("--max-failures", type=int, default=3, help="mismatches reported (and minimized) per seed")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1), help="seeds run at once")
    args = ap.parse_args()
    if not args.check_reference and not args.xsort:
        ap.error("--xsort PATH is required (or --check-reference)")
    if args.xsort:
        args.xsort = os.path.abspath(args.xsort)

    workroot = tempfile.mkdtemp(prefix="xsort-csv-ref-")
    seeds = [args.only_seed] if args.only_seed is not None else list(range(args.seed_base, args.seed_base + args.seeds))
    if args.jobs > 1 and len(seeds) > 1:
        with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(run_seed, [args] * len(seeds), seeds, [workroot] * len(seeds)))
    else:
        results = [run_seed(args, seed, workroot) for seed in seeds]
    cases = sum(r[0] for r in results)
    runs = sum(r[1] for r in results)
    failures = sum(r[2] for r in results)
    for r in results:
        if r[3]:
            print(r[3], flush=True)
    what = "GNU sort" if args.check_reference else "xsort"
    seedtext = f"seeds {seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}"
    if failures:
        failed = [s for s, r in zip(seeds, results) if r[2]]
        print(f"FAILED: {failures} of {cases} cases ({what}, {runs} runs, {seedtext}; failing seeds {failed}); files kept under {workroot}")
        return 1
    shutil.rmtree(workroot, ignore_errors=True)
    print(f"ok: {cases} cases agree ({what}, {runs} runs, {seedtext})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
