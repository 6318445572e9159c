"""Writes N lines of UTF-8 words for bench/locale.sh: seeded, one to three words a line, words made
of syllables with accented letters, mixed case, now and then punctuation or digits, so that a
locale's collation has accents, case and punctuation to weigh.

    python3 bench/locale_gen.py OUT N
"""

import random
import sys

SYLLABLES = [
    "an", "ber", "ca", "da", "el", "fé", "gu", "ha", "is", "jo", "ka", "lä", "mo", "nö", "or", "pe",
    "qu", "ré", "så", "ti", "un", "vé", "wa", "xi", "yo", "zé", "ß", "ça", "ñe", "æl", "ør", "ü",
]


def word(rng: random.Random) -> str:
    w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))
    roll = rng.random()
    if roll < 0.2:
        w = w.capitalize()
    elif roll < 0.25:
        w = w.upper()
    if rng.random() < 0.05:
        w += rng.choice(["-", "'", ".", ","]) + str(rng.randint(0, 99))
    return w


def main() -> None:
    out, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(20261128)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        batch = []
        for _ in range(n):
            batch.append(" ".join(word(rng) for _ in range(rng.randint(1, 3))))
            if len(batch) == 100_000:
                f.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            f.write("\n".join(batch) + "\n")


if __name__ == "__main__":
    main()
