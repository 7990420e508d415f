"""The generated codecs' compiled code, kept between runs as Python keeps a module's bytecode.

``fastcodec`` writes the source of each (message, version) codec it needs and compiles it; the
compile is most of a codec's cost at a process's first requests. The code object is marshalled to
``__pycache__/fastcodec/`` beside this module (under ``sys.pycache_prefix`` when that is set), in a
file named by the Python implementation's cache tag and a checksum of the source; the file holds the
source too, and is used only when that source is the one being compiled, so a checksum collision or
a stale file is a compile, never a wrong codec. As with ``.pyc`` files, nothing is written when
bytecode writing is off (``PYTHONDONTWRITEBYTECODE``) or the directory cannot be written, and a file
that cannot be read is compiled over."""
from __future__ import annotations

import binascii   # its crc32 is zlib's; binascii is imported at start already, zlib is not
import marshal
import os
import sys
from _thread import get_ident

ENV_DIR = "KAFKAEMU_CODEC_CACHE"   # a directory to use instead (tests; read-only installs)


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


def _path(directory: str, source: str, filename: str) -> str:
    checksum = binascii.crc32(filename.encode("utf-8"), binascii.crc32(source.encode("utf-8")))
    return os.path.join(directory, f"{checksum:08x}-{len(source)}.{sys.implementation.cache_tag}.bin")


def _load(path: str, source: str, filename: str):
    try:
        with open(path, "rb") as f:
            kept_source, kept_filename, code = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):   # absent, truncated, or not ours
        return None
    if kept_source != source or kept_filename != filename:
        return None
    return code


def _store(directory: str, path: str, source: str, filename: str, code) -> None:
    if sys.dont_write_bytecode:
        return
    tmp = f"{path}.{os.getpid()}-{get_ident()}.tmp"   # one per writer: processes and threads
    try:
        os.makedirs(directory, exist_ok=True)
        with open(tmp, "wb") as f:
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
    if directory is None:
        return compile(source, filename, "exec")
    path = _path(directory, source, filename)
    code = _load(path, source, filename)
    if code is None:
        code = compile(source, filename, "exec")
        _store(directory, path, source, filename, code)
    return code
