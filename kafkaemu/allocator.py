"""Keeping large buffers' memory between requests (glibc's malloc, ``kafkaemu serve`` only).

Produce requests and Fetch responses move buffers of a megabyte or more. glibc gives such blocks
fresh pages from the kernel (mmap above a threshold, and it trims the heap's free top back to
the kernel), so every request pays a page fault per 4 KiB it touches -- on the project's
machine about 1 ms per MB, more than decoding or validating the data. Raising the mmap threshold
to 16 MiB and the trim threshold to 64 MiB keeps those blocks in the heap for reuse: at most
64 MiB of free memory at the heap's top stays mapped (free memory below a live block stays too,
until reused: after deleting 100 MB of topics, about 100 MiB; BENCHMARKS.md). Elsewhere (musl,
macOS) nothing changes. ``kafkaemu serve`` sets them once its first clients were answered (with
the held ``listening`` event): ctypes, which calls ``mallopt``, costs a start about 1.3 ms to import,
and the thresholds matter only to the large buffers of later requests.
"""
from __future__ import annotations

import sys

M_TRIM_THRESHOLD = -1   # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3


def keep_large_buffers(mmap_threshold: int = 16 << 20, trim_threshold: int = 64 << 20) -> bool:
    """Set glibc's mmap and trim thresholds; returns whether they were set."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):   # no mallopt: not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 and mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1
