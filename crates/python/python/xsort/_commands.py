"""The ``xsort``, ``gensort`` and ``valsort`` commands: the package's console scripts (and
``python -m xsort``) run the workspace's binaries, installed inside the package in ``bin/``."""

import os
import sys

__all__ = ["xsort", "gensort", "valsort"]


def _exec(name: str) -> None:
    """Replaces this process with the command ``name``, given this process's arguments."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)
    try:
        os.execv(path, [name, *sys.argv[1:]])
    except OSError as e:
        sys.exit(f"{name}: cannot run {path}: {e.strerror}")


def xsort() -> None:
    """The ``xsort`` command."""
    _exec("xsort")


def gensort() -> None:
    """The ``gensort`` command (Sort Benchmark records)."""
    _exec("gensort")


def valsort() -> None:
    """The ``valsort`` command (checks Sort Benchmark records)."""
    _exec("valsort")
