"""The exceptions xsort raises. Their messages are the one-line messages the ``xsort`` command
prints after ``xsort:``."""

__all__ = ["Error", "InputError", "UsageError", "SortOSError", "InternalError"]


class Error(Exception):
    """Base class of xsort's errors."""


class InputError(Error, ValueError):
    """Bad input: records that are not whole records, a malformed file.

    ``path`` names the input (``"(records in memory)"`` for an array), and ``offset`` is the byte
    of it where the problem starts when one place is to blame (where a partial last record
    starts), else None."""

    path = None
    offset = None


class UsageError(Error, ValueError):
    """A bad key, option, statement or argument, or a call out of order."""


class SortOSError(Error, OSError):
    """An input or output file, a temp directory, memory or threads failed the sort."""


class InternalError(Error, RuntimeError):
    """A bug in xsort."""
