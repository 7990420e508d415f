"""The generated codecs' compiled code, kept between runs as Python keeps a module's bytecode.

``fastcodec`` writes the source of each (message, version) codec it needs and compiles it; the
compile is most of a codec's cost at a process's first requests. The code object is marshalled to
``__pycache__/fastcodec/`` beside this module (under ``sys.pycache_prefix`` when that is set), in a
file named by the Python implementation's cache tag and a checksum of the source; the file holds the
source too, and is used only when that source is the one being compiled, so a checksum collision or
a stale file is a compile, never a wrong codec. As with ``.pyc`` files, nothing is written when
bytecode writing is off (``PYTHONDONTWRITEBYTECODE``) or the directory cannot be written, and a file
that cannot be read, whatever the failure (a truncated file, one that is not ours, one whose header
claims more than memory holds), is compiled over.

The trust model is Python's own for ``__pycache__``: a loaded file's code runs, so whoever may write
the directory may run code in the broker. Python trusts the directory's permissions; this cache
checks them. A directory owned by another user (root excepted: root can change the interpreter
itself), or that group or others may write, is not used (``refusal`` says why, and the server says
so at start in one line); a file there that is not the directory owner's, or that group or others
may write, is compiled over. The directory this module makes, and its files, only the user may write."""
from __future__ import annotations

import binascii   # its crc32 is zlib's; binascii is imported at start already, zlib is not
import marshal
import os
import sys
from _thread import get_ident
from types import CodeType

ENV_DIR = "KAFKAEMU_CODEC_CACHE"   # a directory to use instead (tests; read-only installs)
_OTHERS_MAY_WRITE = 0o022
_verdicts: dict[str, str | None] = {}   # directory -> why it is not used (None: it is), once a process


def cache_dir() -> str | None:
    """Where compiled codecs are kept, or None when they are not kept."""
    configured = os.environ.get(ENV_DIR)
    if configured:
        return configured
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = sys.pycache_prefix
    if prefix:
        return os.path.join(prefix, here.lstrip(os.sep), "fastcodec")
    return os.path.join(here, "__pycache__", "fastcodec")


def _untrusted(st: os.stat_result) -> str | None:
    """Why a directory or file with this status may hold code written by someone else."""
    if not hasattr(os, "geteuid"):   # no owners and modes to check (Windows), as Python's __pycache__
        return None
    if st.st_uid not in (os.geteuid(), 0):
        return f"it is owned by uid {st.st_uid}, not this user ({os.geteuid()})"
    if st.st_mode & _OTHERS_MAY_WRITE:
        return f"group or others may write it (mode {st.st_mode & 0o7777:04o})"
    return None


def refusal(directory: str | None = None) -> str | None:
    """Why the cache directory is not used, or None when it is (or does not exist yet: it will be
    made, writable by this user only)."""
    directory = directory if directory is not None else cache_dir()
    if directory is None:
        return None
    if directory not in _verdicts:
        try:
            st = os.stat(directory)
        except OSError:
            verdict = None
        else:
            reason = _untrusted(st)
            verdict = None if reason is None else f"the codec cache {directory} is not used: {reason}"
        _verdicts[directory] = verdict
    return _verdicts[directory]


def _path(directory: str, source: str, filename: str) -> str:
    checksum = binascii.crc32(filename.encode("utf-8"), binascii.crc32(source.encode("utf-8")))
    return os.path.join(directory, f"{checksum:08x}-{len(source)}.{sys.implementation.cache_tag}.bin")


def _load(path: str, source: str, filename: str):
    try:
        with open(path, "rb") as f:
            if _untrusted(os.fstat(f.fileno())) is not None:
                return None
            kept_source, kept_filename, code = marshal.loads(f.read())
    except Exception:   # absent, truncated, not ours, a header claiming 2^31 elements (MemoryError): compiled over
        return None
    if kept_source != source or kept_filename != filename or type(code) is not CodeType:
        return None
    return code


def _store(directory: str, path: str, source: str, filename: str, code) -> None:
    if sys.dont_write_bytecode:
        return
    tmp = f"{path}.{os.getpid()}-{get_ident()}.tmp"   # one per writer: processes and threads
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, mode=0o755, exist_ok=True)   # the umask may take more, never add
            _verdicts.pop(directory, None)
            if refusal(directory) is not None:
                return
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with open(fd, "wb") as f:
            f.write(marshal.dumps((source, filename, code)))
        os.replace(tmp, path)   # atomic: a concurrent reader sees the old file or the whole new one
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def compile_codec(source: str, filename: str):
    """The code object of a generated codec's source: from the cache when it holds this source,
    else compiled (and kept for the next process)."""
    directory = cache_dir()
    if directory is None or refusal(directory) is not None:
        return compile(source, filename, "exec")
    path = _path(directory, source, filename)
    code = _load(path, source, filename)
    if code is None:
        code = compile(source, filename, "exec")
        _store(directory, path, source, filename, code)
    return code
