"""The generated codecs' compiled code kept between runs (``protocol/codec_cache``): a codec built
from the cache is the codec built by compiling, a stale, foreign or broken file is compiled over,
and a cache that cannot be written, or bytecode writing turned off, only means compiling."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kafkaemu.protocol import codec_cache
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.fastcodec import FastCodec

SOURCE = "def f():\n    return 41 + 1\n"
NAME = "<fastcodec Test v0>"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(codec_cache.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path


def _files(directory) -> list[str]:
    return sorted(os.listdir(directory))


def _run(code) -> int:
    ns: dict = {}
    exec(code, ns)
    return ns["f"]()


def test_the_first_compile_is_kept_and_the_second_is_loaded(cache, monkeypatch):
    first = codec_cache.compile_codec(SOURCE, NAME)
    assert _run(first) == 42
    [kept] = _files(cache)
    assert kept.endswith(f".{sys.implementation.cache_tag}.bin")

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled although the cache holds this source")
    monkeypatch.setattr(codec_cache, "compile", no_compile, raising=False)
    second = codec_cache.compile_codec(SOURCE, NAME)
    assert _run(second) == 42
    assert second.co_filename == NAME


def test_a_file_holding_other_source_is_compiled_over(cache):
    codec_cache.compile_codec(SOURCE, NAME)
    [kept] = _files(cache)
    other = "def f():\n    return 7\n"
    # the same file name with another source in it: a checksum collision, or a stale file
    path = os.path.join(cache, kept)
    import marshal
    with open(path, "wb") as f:
        f.write(marshal.dumps((other, NAME, compile(other, NAME, "exec"))))
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42
    with open(path, "rb") as f:
        assert marshal.loads(f.read())[0] == SOURCE   # rewritten with the right code


@pytest.mark.parametrize("content", [b"", b"\x00garbage", b"\xe3\x01\x02"])
def test_a_broken_file_is_compiled_over(cache, content):
    codec_cache.compile_codec(SOURCE, NAME)
    [kept] = _files(cache)
    with open(os.path.join(cache, kept), "wb") as f:
        f.write(content)
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42


def test_nothing_is_written_with_bytecode_writing_off(cache, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42
    assert _files(cache) == []


def test_an_unwritable_cache_only_means_compiling(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(codec_cache.ENV_DIR, str(blocker / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42


def test_the_default_place_follows_pycache_prefix(monkeypatch, tmp_path):
    monkeypatch.delenv(codec_cache.ENV_DIR, raising=False)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    beside = codec_cache.cache_dir()
    assert beside == os.path.join(os.path.dirname(codec_cache.__file__), "__pycache__", "fastcodec")
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    assert codec_cache.cache_dir().startswith(str(tmp_path) + os.sep)


def test_a_cached_codec_decodes_and_encodes_as_a_compiled_one(cache):
    spec = catalog().requests[1]   # Fetch
    version = spec.version_list[-1]
    compiled = FastCodec(spec, version)
    assert _files(cache)
    loaded = FastCodec(spec, version)
    assert loaded.source == compiled.source
    body = {"max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52428800, "isolation_level": 1,
            "session_id": 0, "session_epoch": -1, "replica_id": -1,
            "topics": [{"topic": "t", "topic_id": b"\x01" * 16,
                        "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 7,
                                        "last_fetched_epoch": -1, "log_start_offset": -1,
                                        "partition_max_bytes": 1048576}]}],
            "forgotten_topics_data": [], "rack_id": ""}
    data = compiled.encode(body)
    assert loaded.encode(body) == data
    assert loaded.decode(data) == compiled.decode(data)


def test_a_second_process_loads_the_first_ones_codecs(tmp_path):
    """The point of the cache: a fresh interpreter's first requests find their codecs compiled."""
    script = ("import builtins, sys\n"
              "from kafkaemu.protocol import codec_cache\n"
              "from kafkaemu.protocol.catalog import catalog\n"
              "calls = []\n"
              "real = builtins.compile\n"
              "codec_cache.compile = lambda *a, **k: (calls.append(a[1]), real(*a, **k))[1]\n"
              "cat = catalog()\n"
              "for key in (18, 3, 1):\n"
              "    cat.request(key, cat.requests[key].version_list[-1]).fast\n"
              "print(len(calls))\n")
    env = {**os.environ, codec_cache.ENV_DIR: str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def compiles() -> int:
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return int(out.stdout.split()[-1])
    assert compiles() == 3
    assert compiles() == 0


def test_writers_at_once_leave_one_whole_file(cache):
    """Threads (an in-process emulator's loop and a test's) compiling the same codec together:
    each gets working code and the file left behind is whole."""
    import threading
    results = []
    barrier = threading.Barrier(8)

    def build():
        barrier.wait()
        results.append(_run(codec_cache.compile_codec(SOURCE, NAME)))
    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [42] * 8
    [kept] = _files(cache)   # no temporary file left
    assert codec_cache._load(os.path.join(cache, kept), SOURCE, NAME) is not None


# -- failing safe (issue 28) ------------------------------------------------------------------
CLAIMS_2_31 = b"[" + (2**31 - 1).to_bytes(4, "little")   # a marshalled list header: 2^31-1 elements


def test_a_file_whose_header_claims_more_than_memory_holds_is_compiled_over(tmp_path):
    """Under an address-space limit, marshal raises MemoryError for the list; the file is compiled
    over, and the second process loads the good file written in its place."""
    script = ("import os, resource, sys\n"
              "from kafkaemu.protocol import codec_cache\n"
              f"source, name = {SOURCE!r}, {NAME!r}\n"
              "path = codec_cache._path(os.environ[codec_cache.ENV_DIR], source, name)\n"
              "if sys.argv[1] == 'poison':\n"
              f"    open(path, 'wb').write({CLAIMS_2_31!r})\n"
              "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))\n"
              "try:\n"
              "    open(path, 'rb') and __import__('marshal').loads(open(path, 'rb').read())\n"
              "    print('loaded', end=' ')\n"
              "except MemoryError:\n"
              "    print('MemoryError', end=' ')\n"
              "ns = {}\n"
              "exec(codec_cache.compile_codec(source, name), ns)\n"
              "print(ns['f']())\n")
    env = {**os.environ, codec_cache.ENV_DIR: str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run(step: str) -> str:
        out = subprocess.run([sys.executable, "-c", script, step], env=env, capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()
    assert run("poison") == "MemoryError 42"   # the poisoned file does raise MemoryError, and is compiled over
    assert run("again") == "loaded 42"          # rewritten with the compiled code


@pytest.mark.parametrize("error", [MemoryError, RecursionError, OverflowError, KeyError, SystemError])
def test_any_failure_to_load_a_file_is_compiled_over(cache, monkeypatch, error):
    codec_cache.compile_codec(SOURCE, NAME)

    def fails(data):
        raise error("from the file")
    monkeypatch.setattr(codec_cache.marshal, "loads", fails)
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42


def test_a_file_whose_code_is_not_code_is_compiled_over(cache):
    codec_cache.compile_codec(SOURCE, NAME)
    [kept] = _files(cache)
    import marshal
    with open(os.path.join(cache, kept), "wb") as f:
        f.write(marshal.dumps((SOURCE, NAME, "not a code object")))
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42


needs_owners = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="owners and modes need a POSIX system")


def _planted(directory) -> str:
    """A file in ``directory`` holding SOURCE's name and code that answers 666 instead."""
    import marshal
    evil = "def f():\n    return 666\n"
    path = codec_cache._path(str(directory), SOURCE, NAME)
    with open(path, "wb") as f:
        f.write(marshal.dumps((SOURCE, NAME, compile(evil, NAME, "exec"))))
    os.chmod(path, 0o644)
    return path


@needs_owners
@pytest.mark.parametrize("mode", [0o775, 0o757, 0o777])
def test_a_cache_others_may_write_is_not_used(tmp_path, monkeypatch, mode):
    directory = tmp_path / "shared"
    directory.mkdir()
    _planted(directory)
    os.chmod(directory, mode)
    monkeypatch.setenv(codec_cache.ENV_DIR, str(directory))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(codec_cache, "_verdicts", {})
    assert "group or others may write it" in codec_cache.refusal()
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42   # the planted code is never run


@needs_owners
def test_a_cache_of_another_user_is_not_used(tmp_path, monkeypatch):
    directory = tmp_path / "theirs"
    directory.mkdir(mode=0o755)
    real_stat = os.stat

    def stat(path, *args, **kwargs):   # the directory as another user's (a test cannot chown)
        st = real_stat(path, *args, **kwargs)
        if os.fspath(path) == str(directory):
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, os.geteuid() + 1, *st[5:]))
        return st
    monkeypatch.setattr(codec_cache.os, "stat", stat)
    monkeypatch.setattr(codec_cache, "_verdicts", {})
    reason = codec_cache.refusal(str(directory))
    assert reason is not None and f"owned by uid {os.geteuid() + 1}" in reason


@needs_owners
def test_a_file_others_may_write_in_a_good_cache_is_compiled_over_and_replaced(cache, monkeypatch):
    os.chmod(cache, 0o700)
    monkeypatch.setattr(codec_cache, "_verdicts", {})
    path = _planted(cache)
    os.chmod(path, 0o666)
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42
    assert os.stat(path).st_mode & 0o022 == 0   # replaced by this user's own, which others may not write
    assert _run(codec_cache.compile_codec(SOURCE, NAME)) == 42


@needs_owners
def test_a_cache_this_module_makes_only_the_user_may_write(tmp_path, monkeypatch):
    old = os.umask(0o002)   # a user-private-group umask: directories 775, files 664 by default
    try:
        monkeypatch.setenv(codec_cache.ENV_DIR, str(tmp_path / "made"))
        monkeypatch.setattr(sys, "dont_write_bytecode", False)
        monkeypatch.setattr(codec_cache, "_verdicts", {})
        codec_cache.compile_codec(SOURCE, NAME)
    finally:
        os.umask(old)
    made = tmp_path / "made"
    assert os.stat(made).st_mode & 0o022 == 0
    assert all(os.stat(made / name).st_mode & 0o022 == 0 for name in os.listdir(made))
    assert codec_cache.refusal() is None


@needs_owners
def test_the_server_says_at_start_in_one_line_that_the_cache_is_not_used(tmp_path):
    directory = tmp_path / "open"
    directory.mkdir()
    os.chmod(directory, 0o777)
    env = {**os.environ, codec_cache.ENV_DIR: str(directory)}
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("kafkaemu listening on ")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    said = [line for line in err.splitlines() if "codec_cache_not_used" in line]
    assert len(said) == 1 and "group or others may write it" in said[0], err
    assert os.listdir(directory) == []
