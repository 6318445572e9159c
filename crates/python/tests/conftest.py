"""Helpers of the xsort package's tests: the numpy reference sort and a Ctrl-C simulator."""

import _thread
import threading
import time

import numpy as np
import pytest


def reference_order(arr, names, descending):
    """The stable order numpy gives: ``np.lexsort`` over the named fields (None: the values of a
    plain array), each descending field's order reversed (by negated dense ranks; np.unique
    holds -0.0 equal to +0.0 and puts the NaNs last, as numpy's sort does)."""
    keys = []
    for name, desc in zip(names, descending):
        column = arr if name is None else arr[name]
        _, rank = np.unique(column, return_inverse=True)
        rank = rank.reshape(-1).astype(np.int64)
        keys.append(-rank if desc else rank)
    return np.lexsort(keys[::-1]) if keys else np.arange(len(arr))


def interrupted(call, after=0.1):
    """Runs ``call`` with Ctrl-C (SIGINT's KeyboardInterrupt) coming ``after`` seconds in; returns
    the seconds from the interrupt to the KeyboardInterrupt. Fails if the call ended first."""
    timer = threading.Timer(after, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    returned = False
    try:
        call()
        returned = True
        time.sleep(30)  # The interrupt lands here when the call ended before it.
    except KeyboardInterrupt:
        took = time.monotonic() - start - after
    timer.join()
    assert not returned, "the call ended before Ctrl-C came: give it more work"
    return took


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)
