#!/usr/bin/env python3
"""A CSV file for bench/csv.sh: RFC 4180, a header, quoted fields, deterministic.

    python3 bench/csv_gen.py OUT BYTES [SEED]

Writes records until the file holds at least BYTES bytes (about 100 bytes a record) and prints the
number of records (header excluded) and of those that span lines. The header is `id,name,city,price,comment`:

- id: the record's number in the file (1, 2, ...): an input order that a stable sort must keep
  among equal prices;
- name: "Last, First" quoted (it holds the separator) in half the records, some of them with a
  nickname in doubled quotes (Smith, Robert "Bob", written with the quotes doubled), a plain "First Last" in the others;
- city: a plain name, or "City, Country" quoted;
- price: the numeric key, never empty: -5000.00 to 50000.00, most with two decimals, some with one
  or none (3.5, 42), so that equal numbers are written differently; about 5.5 million values for
  10 million records, so ties are common;
- comment: words, quoted when they hold a comma or doubled quotes, and 1 record in 50 has a
  quoted comment over two or three lines (embedded newlines), so such a record spans lines.

No field is empty and none starts or ends with a space (a peer may read such fields differently);
records end with a single newline.
"""

import random
import sys

FIRST = ("Alice Bruno Chloe Dmitri Elena Farid Grace Hiro Ines Jonas Kavya Liam Mei Nadia Omar "
         "Paula Quentin Rosa Sven Tariq Uma Viktor Wen Ximena Yusuf Zoe").split()
LAST = ("Abbott Becker Castillo Dubois Eriksen Fischer Garcia Haddad Ivanova Jensen Kowalski "
        "Lindqvist Moreau Nakamura Okafor Petrov Quispe Rossi Schmidt Tanaka Ueda Varga Weber "
        "Xu Yilmaz Zhang").split()
NICK = ["Bob", "Kit", "Ace", "Doc", "Red", "Max"]
CITIES = ("Amsterdam Berlin Cairo Delhi Erfurt Fez Geneva Hanoi Izmir Jakarta Kyoto Lima Madrid "
          "Nairobi Oslo Porto Quito Riga Seoul Tunis Utrecht Vienna Warsaw Xian York Zagreb").split()
COUNTRIES = "Netherlands Germany Egypt India Morocco Switzerland Vietnam Turkey Japan Peru Spain".split()
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu "
         "shipped returned pending late fragile boxed").split()


def quote(s):
    return '"' + s.replace('"', '""') + '"'


def pools(rnd):
    names = []
    for i in range(1 << 14):
        first, last = rnd.choice(FIRST), rnd.choice(LAST)
        if i % 2:
            names.append(f"{first} {last}")
        elif i % 8 == 0:
            names.append(quote(f'{last}, {first} "{rnd.choice(NICK)}"'))
        else:
            names.append(quote(f"{last}, {first}"))
    cities = []
    for i in range(1 << 10):
        city = rnd.choice(CITIES)
        cities.append(quote(f"{city}, {rnd.choice(COUNTRIES)}") if i % 3 == 0 else city)
    comments = []
    for i in range(1 << 14):
        words = [rnd.choice(WORDS) for _ in range(rnd.randint(3, 9))]
        if i % 50 == 0:  # 1 in 50: over two or three lines
            parts = [" ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :])]
            if i % 100 == 0:
                parts.append("end")
            comments.append(quote("\n".join(parts)))
        elif i % 7 == 0:
            comments.append(quote(f"{' '.join(words[:2])}, {' '.join(words[2:])}"))
        elif i % 11 == 0:
            comments.append(quote(f'{words[0]} "{words[1]}" {" ".join(words[2:])}'))
        else:
            comments.append(" ".join(words))
    return names, cities, comments


def main():
    out, size = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 2026
    rnd = random.Random(seed)
    names, cities, comments = pools(rnd)
    spans = [c.count("\n") > 0 for c in comments]
    bits = rnd.getrandbits
    written, n, multi = 0, 0, 0
    with open(out, "w", encoding="ascii", newline="") as f:
        header = "id,name,city,price,comment\n"
        f.write(header)
        written += len(header)
        while written < size:
            chunk = []
            for _ in range(10000):
                n += 1
                r = bits(72)  # name: bits 0-13, city 14-23, comment 24-37, form 38-41, price 42-71
                cents = (r >> 42) % 5500001 - 500000  # -5000.00 .. 50000.00
                form = (r >> 38) & 15
                if form == 0:  # 42, -7 (whole units)
                    price = str(cents // 100)
                elif form == 1:  # 3.5, -0.5 (tenths)
                    a = abs(cents) // 10
                    price = f"{'-' if cents < 0 and a else ''}{a // 10}.{a % 10}"
                else:  # 12.05, -0.50, 0.00
                    a = abs(cents)
                    price = f"{'-' if cents < 0 else ''}{a // 100}.{a % 100:02d}"
                c = (r >> 24) & 16383
                multi += spans[c]
                chunk.append(f"{n},{names[r & 16383]},{cities[(r >> 14) & 1023]},{price},{comments[c]}\n")
            text = "".join(chunk)
            f.write(text)
            written += len(text)
    print(n, multi)


if __name__ == "__main__":
    main()
