"""``kafkaemu serve`` and ``KafkaEmulator`` as processes: every setting reaches the child, bad ones
end it with one line, logs go where they should and in the format asked for."""
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing import raw_client
from tests.test_config import SAMPLES

from .security_certs import self_signed_certificate

SERVE = [sys.executable, "-m", "kafkaemu", "serve"]


def busy_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def start_serve(*argv, **popen):
    proc = subprocess.Popen([*SERVE, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    line = proc.stdout.readline()
    assert line.startswith("kafkaemu listening on "), (line, proc.stderr.read() if not line else "")
    return proc, int(line.rsplit(":", 1)[1])


def stop(proc) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    return err


def metadata(host: str, port: int):
    with socket.create_connection((host, port), timeout=10) as sock:
        return raw_client.request(sock, ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})


# -- every setting reaches the child ---------------------------------------------------------
def test_every_setting_round_trips_through_the_subprocess_command(tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    settings = dict(SAMPLES, tls_cert=cert, tls_key=key, tls_key_password=None, tls_ca=cert,
                    data_dir=str(tmp_path / "data"))
    emulator = KafkaEmulator(subprocess_mode=True, **settings)
    out = subprocess.run([*emulator.subprocess_command(), "--print-config"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads(json.dumps(emulator.config.as_dict()))
    assert emulator.config.tls_key_password is None and emulator.config.node_id == 7


def test_settings_once_dropped_by_subprocess_mode_take_effect():
    with KafkaEmulator(subprocess_mode=True, advertised_host="localhost", node_id=7, nodes=2) as emulator:
        reply = metadata("127.0.0.1", emulator.port)
    assert sorted((b.node_id, b.host) for b in reply.brokers) == [(7, "localhost"), (8, "localhost")]


def test_a_child_that_cannot_listen_says_why():
    with busy_port() as sock:
        emulator = KafkaEmulator(subprocess_mode=True, port=sock.getsockname()[1])
        with pytest.raises(RuntimeError, match=r"kafkaemu did not start \(exit status 1\): kafkaemu: cannot listen "
                                               r"on 127.0.0.1: .*address already in use"):
            emulator.start()


# -- bad settings and the environment -----------------------------------------------------------
def test_a_busy_port_is_one_line_and_exit_status_1():
    with busy_port() as sock:
        out = subprocess.run([*SERVE, "--port", str(sock.getsockname()[1])], capture_output=True, text=True,
                             timeout=60)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("kafkaemu: cannot listen on 127.0.0.1: ") and out.stderr.count("\n") == 1
    assert "address already in use" in out.stderr


def test_a_busy_control_port_is_one_line_and_exit_status_1():
    """The control API's port is bound at start, before its server is loaded (control/listener.py)."""
    with busy_port() as sock:
        out = subprocess.run([*SERVE, "--port", "0", "--control-port", str(sock.getsockname()[1])],
                             capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("kafkaemu: cannot listen on 127.0.0.1: ") and out.stderr.count("\n") == 1
    assert "address already in use" in out.stderr.lower()


def test_a_bad_setting_ends_the_process_with_one_line():
    out = subprocess.run([*SERVE, "--port", "70000"], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout, out.stderr) == \
        (2, "", "kafkaemu serve: error: --port must be from 0 to 65535, got 70000\n")


def test_a_wildcard_host_advertises_the_machines_name():
    proc, port = start_serve("--host", "0.0.0.0", "--port", "0")
    try:
        reply = metadata("127.0.0.1", port)
    finally:
        stop(proc)
    assert [(b.host, b.port) for b in reply.brokers] == [(socket.gethostname(), port)]


# -- logs -------------------------------------------------------------------------------------------
def test_json_mode_writes_every_log_line_as_json():
    proc, port = start_serve("--port", "0", "--log-format", "json", "--log-level", "DEBUG")
    metadata("127.0.0.1", port)
    err = stop(proc)
    events = [json.loads(line) for line in err.splitlines()]
    assert {"listening", "connection_opened", "stopped"} <= {e["event"] for e in events}


def test_json_mode_renders_standard_library_logging_warnings_and_crashes_as_json():
    script = textwrap.dedent("""
        import logging, warnings
        import structlog
        from kafkaemu.logging import configure_logging
        configure_logging("json", "info", stdlib=True)
        structlog.get_logger("kafkaemu.test").info("structlog_event", n=1)
        try:
            1 / 0
        except ZeroDivisionError:
            logging.getLogger("asyncio").error("Task exception was never retrieved", exc_info=True)
        logging.getLogger("asyncio").debug("below the level")
        warnings.warn("a warning")
        raise RuntimeError("uncaught")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in out.stderr.splitlines()]
    assert [e["event"].splitlines()[0] if e["event"] else e["event"] for e in events][:2] == \
        ["structlog_event", "Task exception was never retrieved"]
    assert "ZeroDivisionError" in events[1]["exception"] and events[1]["logger"] == "asyncio"
    assert any("a warning" in e["event"] for e in events)
    assert events[-1]["event"] == "uncaught_exception" and "RuntimeError: uncaught" in events[-1]["exception"]
    assert not any("below the level" in e["event"] for e in events)


def test_the_emulator_outside_pytest_logs_only_warnings_on_stderr():
    script = textwrap.dedent("""
        import socket
        from kafkaemu.testing import KafkaEmulator
        with KafkaEmulator() as emulator:
            socket.create_connection(("127.0.0.1", emulator.port)).close()
        print("done")
    """)
    env = {k: v for k, v in os.environ.items() if k != "KAFKAEMU_LOG_LEVEL"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert (out.returncode, out.stdout, out.stderr) == (0, "done\n", "")


@pytest.mark.parametrize("level,ok", [("INFO", True), ("Debug", True), ("verbose", False)])
def test_kafkaemu_log_level_in_pytest_takes_any_case(level, ok, tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:kafkaemu", "-p", "no:randomly",
                          "-p", "no:cacheprovider", "-p", "kafkaemu.testing.pytest_plugin", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=dict(os.environ, KAFKAEMU_LOG_LEVEL=level))
    if ok:
        assert out.returncode == 0, out.stdout + out.stderr
    else:
        assert out.returncode != 0 and "KAFKAEMU_LOG_LEVEL" in out.stdout + out.stderr
        assert "Traceback" not in out.stdout + out.stderr


def free_port_before_a_busy_one():
    """(port, socket): ``port`` is free and ``port + 1`` is held by ``socket``."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        busy = socket.socket()
        try:
            busy.bind(("127.0.0.1", port + 1))
        except OSError:
            busy.close()
            continue
        busy.listen()
        return port, busy
    pytest.skip("no free port next to a free port")


def test_an_in_process_emulator_on_a_taken_port_raises_and_frees_what_it_opened():
    port, busy = free_port_before_a_busy_one()
    with busy:
        emulator = KafkaEmulator(port=port, nodes=2)  # the first node listens, the second cannot
        with pytest.raises(OSError, match="address already in use"):
            emulator.start()
    assert emulator.port is None and emulator._loop is None
    with socket.socket() as again:  # the first node's port was closed again
        again.bind(("127.0.0.1", port))


@pytest.mark.parametrize("command", [["apis"], ["errors"], ["serve", "--print-config"]])
def test_a_reader_that_stops_early_ends_the_output_quietly(command):
    """``kafkaemu apis | head``: the reader is gone before the first line; no BrokenPipe traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "kafkaemu", *command], stdout=write, stderr=subprocess.PIPE,
                              timeout=60)
    finally:
        os.close(write)
    assert done.stderr == b"" and done.returncode == 141


# -- the child dies with its parent --------------------------------------------------------
def test_the_subprocess_dies_when_the_process_that_started_it_is_killed():
    from tests.orphans import kill, orphan_of_killed_parent, wait_gone
    pid = orphan_of_killed_parent("""
        from kafkaemu.testing import KafkaEmulator
        emulator = KafkaEmulator(subprocess_mode=True).start()
        print(emulator._proc.pid, flush=True)
        """)
    try:
        assert wait_gone(pid)
    finally:
        kill(pid)
