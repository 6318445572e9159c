"""``python -m xsort ARGS``: the ``xsort`` command."""

from xsort._commands import xsort

if __name__ == "__main__":
    xsort()
