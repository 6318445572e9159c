"""The ``xsort``, ``nsort``, ``gensort`` and ``valsort`` commands: the package's console scripts (and
``python -m xsort``) run the workspace's binaries, installed inside the package in ``bin/``."""

import os
import sys

__all__ = ["xsort", "nsort", "gensort", "valsort"]


def _exec(name: str, run_as: str = "") -> None:
    """Replaces this process with the command ``name``, run by the name ``run_as`` (default: its
    own), given this process's arguments."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)
    try:
        os.execv(path, [run_as or name, *sys.argv[1:]])
    except OSError as e:
        sys.exit(f"{name}: cannot run {path}: {e.strerror}")


def xsort() -> None:
    """The ``xsort`` command."""
    _exec("xsort")


def nsort() -> None:
    """The ``nsort`` command: xsort reading Nsort's command line."""
    _exec("xsort", run_as="nsort")


def gensort() -> None:
    """The ``gensort`` command (Sort Benchmark records)."""
    _exec("gensort")


def valsort() -> None:
    """The ``valsort`` command (checks Sort Benchmark records)."""
    _exec("valsort")
