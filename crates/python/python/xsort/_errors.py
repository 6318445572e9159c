"""The exceptions xsort raises. Their messages are the one-line messages the ``xsort`` command
prints after ``xsort:``."""

__all__ = ["Error", "InputError", "UsageError", "SortOSError", "InternalError"]


class Error(Exception):
    """Base class of xsort's errors."""


class InputError(Error, ValueError):
    """Bad input: records that are not whole records, a malformed file."""


class UsageError(Error, ValueError):
    """A bad key, option, statement or argument, or a call out of order."""


class SortOSError(Error, OSError):
    """An input or output file, a temp directory, memory or threads failed the sort."""


class InternalError(Error, RuntimeError):
    """A bug in xsort."""
