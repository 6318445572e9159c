#!/usr/bin/env python3
"""A differential test of `xsort --jsonl` against an independent reference on Python's `json`.

For each seed it writes random JSON lines (nested objects, arrays, numbers in every JSON form,
strings with escapes and non-ASCII text, null, booleans, missing members, blank lines, CRLF), runs
xsort with several key sets, and compares the output bytes with the reference's order: values of
different types as jq orders them with a missing value first (missing < null < false < true <
numbers < strings < arrays < objects), numbers by value, strings by their UTF-8 bytes, arrays and
objects by their text as written; `n` compares strings holding a number as numbers, `f` folds
ASCII case, `r` reverses; ties go to the whole line's bytes (reversed by a global -r) unless -s.

Usage: jsonl_reference.py --xsort PATH [--seeds N]
"""

import argparse
import functools
import json
import os
import random
import subprocess
import sys
import tempfile

RANK = {"missing": 0, "null": 1, "false": 2, "true": 3, "number": 4, "string": 5, "array": 6, "object": 7}
WORDS = ["apple", "Apple", "b", "ÉTÉ", "zebra", "", "12", "-3.5", "7", "x\"q", "tab\there", "\u00e9", "\U0001F600"]


def value(rng, depth):
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.randint(-50, 50)
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e20, -2.5e-3, 3.0, 1e3, 12.25])
    if kind in (4, 5):
        return rng.choice(WORDS)
    if kind in (6, 7):
        return {k: value(rng, depth + 1) for k in rng.sample(["a", "b", "c", "d e"], rng.randrange(3))}
    return [value(rng, depth + 1) for _ in range(rng.randrange(3))]


def record(rng):
    obj = {}
    for name in rng.sample(["id", "age", "name", "user", "tags", "x"], rng.randrange(1, 6)):
        obj[name] = value(rng, 0)
    if rng.random() < 0.3:
        obj["user"] = {"age": value(rng, 1), "name": rng.choice(WORDS)}
    return obj


def render(rng, obj):
    """The line as written, and the same settings for any value inside it."""
    ascii_ = rng.random() < 0.5
    dump = functools.partial(json.dumps, ensure_ascii=ascii_)
    return dump(obj), dump


def at(obj, path):
    for step in path:
        if isinstance(step, int):
            if not isinstance(obj, list) or step >= len(obj):
                return ("missing",)
            obj = obj[step]
        else:
            if not isinstance(obj, dict) or step not in obj:
                return ("missing",)
            obj = obj[step]
    return ("found", obj)


def key_of(found, dump, numeric, fold):
    if found[0] == "missing":
        return (RANK["missing"],)
    v = found[1]
    if v is None:
        return (RANK["null"],)
    if v is True:
        return (RANK["true"],)
    if v is False:
        return (RANK["false"],)
    if isinstance(v, (int, float)):
        return (RANK["number"], float(v))
    if isinstance(v, str):
        if numeric:
            try:
                return (RANK["number"], float(v))
            except ValueError:
                pass
        b = v.encode()
        if fold:
            b = bytes(c - 32 if 97 <= c <= 122 else c for c in b)
        return (RANK["string"], b)
    return (RANK["array" if isinstance(v, list) else "object"], dump(v).encode())


def parse_path(p):
    steps = []
    for part in p.strip(".").replace("[", ".[").split("."):
        if not part:
            continue
        steps.append(int(part[1:-1]) if part.startswith("[") else part)
    return steps


def expected(lines, keys, stable, rev):
    """lines: (raw bytes without newline, obj or None for blank, dump)."""

    def cmp(x, y):
        for path, numeric, fold, reverse in keys:
            kx = key_of(at(x[1], path) if x[1] is not None else ("missing",), x[2], numeric, fold)
            ky = key_of(at(y[1], path) if y[1] is not None else ("missing",), y[2], numeric, fold)
            if kx != ky:
                d = -1 if kx < ky else 1
                return -d if reverse else d
        if stable:
            return 0
        d = (x[0] > y[0]) - (x[0] < y[0])
        return -d if rev else d

    return sorted(lines, key=functools.cmp_to_key(cmp))


KEYSETS = [
    (["-k", ".age"], [(".age", False, False, False)], False, False),
    (["-k", ".user.age:r", "-s"], [(".user.age", False, False, True)], True, False),
    (["-k", ".name:f", "-k", ".id:n"], [(".name", False, True, False), (".id", True, False, False)], False, False),
    # A key without letters of its own takes the global ones, -r included (as GNU sort).
    (["-k", ".tags[0]", "-r"], [(".tags[0]", False, False, True)], False, True),
    (["-k", ".x:nr", "-s", "-S", "200K"], [(".x", True, False, True)], True, False),
    (["-k", '."user".name', "-k", ".x.b"], [(".user.name", False, False, False), (".x.b", False, False, False)], False, False),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xsort", required=True)
    ap.add_argument("--seeds", type=int, default=20)
    a = ap.parse_args()
    env = dict(os.environ, LC_ALL="C")
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(a.seeds):
            rng = random.Random(seed)
            lines = []
            n = 3000 if seed % 5 == 0 else 300
            for _ in range(n):
                if rng.random() < 0.02:
                    lines.append((b"", None, None))
                    continue
                obj = record(rng)
                text, dump = render(rng, obj)
                raw = text.encode() + (b"\r" if rng.random() < 0.05 else b"")
                assert json.loads(raw) == obj
                lines.append((raw, obj, dump))
            path = os.path.join(tmp, f"in{seed}.jsonl")
            with open(path, "wb") as f:
                # Odd seeds end without a last newline (unless the last line is blank: it would vanish).
                f.write(b"\n".join(l[0] for l in lines) + (b"\n" if seed % 2 or not lines[-1][0] else b""))
            for args, keys, stable, rev in KEYSETS:
                keys = [(parse_path(p), num, fold, r) for p, num, fold, r in keys]
                want = b"".join(l[0] + b"\n" for l in expected(lines, keys, stable, rev))
                out = subprocess.run([a.xsort, "--jsonl", *args, path], capture_output=True, env=env)
                if out.returncode != 0 or out.stdout != want:
                    got = out.stdout.split(b"\n")
                    exp = want.split(b"\n")
                    i = next((i for i, (g, e) in enumerate(zip(got, exp)) if g != e), min(len(got), len(exp)))
                    print(f"seed {seed} {args}: rc {out.returncode} {out.stderr.decode()!r}; first difference at line {i + 1}:")
                    print(f"  expected {exp[i] if i < len(exp) else None!r}\n  got      {got[i] if i < len(got) else None!r}")
                    return 1
            bad = os.path.join(tmp, f"bad{seed}.jsonl")
            k = rng.randrange(1, 50)
            with open(bad, "wb") as f:
                f.write(b"".join(l[0] + b"\n" for l in lines[:k]) + b'{"a": [1, }\n' + b"{}\n")
            out = subprocess.run([a.xsort, "--jsonl", "-k", ".a", bad, "-o", os.path.join(tmp, "o")], capture_output=True, env=env)
            msg = out.stderr.decode()
            if out.returncode != 2 or f"bad{seed}.jsonl: line {k + 1}: invalid JSON" not in msg or os.path.exists(os.path.join(tmp, "o")):
                print(f"seed {seed}: a bad line {k + 1} gave rc {out.returncode}: {msg!r}")
                return 1
    print(f"{a.seeds} seeds agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
