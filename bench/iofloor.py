#!/usr/bin/env python3
"""I/O helpers for bench.sh, with no dependencies beyond Python's standard library.

  iofloor.py evict FILE...          drop FILEs' pages from the page cache (posix_fadvise DONTNEED)
  iofloor.py read FILE              O_DIRECT read of FILE in 8 MiB transfers; prints seconds
  iofloor.py write FILE BYTES       O_DIRECT write of BYTES (rounded up to 4 KiB) + fsync; prints seconds
  iofloor.py rss-ok JSON            checks peak_rss_bytes <= budget + 10% + 32 MiB; prints the figures
"""
import json, mmap, os, sys, time

BLOCK = 8 << 20


def evict(paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def direct_read(path):
    buf = mmap.mmap(-1, BLOCK)  # page aligned, as O_DIRECT requires
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    t = time.perf_counter()
    while os.readv(fd, [buf]) == BLOCK:
        pass
    os.close(fd)
    return time.perf_counter() - t


def direct_write(path, nbytes):
    buf = mmap.mmap(-1, BLOCK)
    buf.write(os.urandom(1 << 16) * (BLOCK >> 16))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o644)
    t = time.perf_counter()
    left = (nbytes + 4095) // 4096 * 4096
    while left > 0:
        n = min(left, BLOCK)
        os.writev(fd, [memoryview(buf)[:n]])
        left -= n
    os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - t


def rss_ok(path):
    s = json.load(open(path))
    budget, rss = s["memory_budget_bytes"], s["peak_rss_bytes"]
    limit = budget * 1.1 + (32 << 20)
    print(f"peak RSS {rss / 2**20:.1f} MiB, budget {budget / 2**20:.1f} MiB, limit {limit / 2**20:.1f} MiB: "
          + ("OK" if rss <= limit else "OVER"))
    return rss <= limit


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "evict":
        evict(args)
    elif cmd == "read":
        print(f"{direct_read(args[0]):.3f}")
    elif cmd == "write":
        print(f"{direct_write(args[0], int(args[1])):.3f}")
    elif cmd == "rss-ok":
        sys.exit(0 if rss_ok(args[0]) else 1)
    else:
        sys.exit(__doc__)
