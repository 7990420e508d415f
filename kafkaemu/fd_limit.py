"""The open-files limit of a broker process: every client connection is a file descriptor, and a
soft limit of 1024 (common by default) would refuse connections long before the broker is busy.

``kafkaemu serve`` raises its soft RLIMIT_NOFILE to the hard limit at start-up, as many servers do
(the JVM that runs Kafka does the same with -XX:+MaxFDLimit, its default). Only the process
kafkaemu owns does this: an emulator started inside a test process leaves that process's limits
alone.
"""
from __future__ import annotations

from .logging import get_logger

log = get_logger("kafkaemu.server")

# macOS refuses a soft limit above OPEN_MAX even when the hard limit is unlimited.
_FALLBACK_SOFT_LIMIT = 10240


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise the soft open-files limit towards the hard one; returns (old, new) soft limits, or
    None where there is no such limit (not POSIX) or nothing could be raised."""
    try:
        import resource
    except ImportError:   # Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or (hard != resource.RLIM_INFINITY and soft >= hard):
        return None
    for target in (hard, _FALLBACK_SOFT_LIMIT):
        if target != resource.RLIM_INFINITY and target <= soft:
            continue
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            continue
        new = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        log.info("open_files_limit_raised", soft_before=soft, soft=new, hard=hard)
        return soft, new
    log.warning("open_files_limit_not_raised", soft=soft, hard=hard)
    return None
