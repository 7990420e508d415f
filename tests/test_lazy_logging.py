"""kafkaemu's loggers (``kafkaemu.logging.get_logger``) import structlog on the first event that is
emitted: until then an event below the configured level is dropped, and ``configure_logging``'s
settings wait. Each case runs in a fresh interpreter, where nothing has imported structlog yet."""
import json
import subprocess
import sys

_PRELUDE = """
import io, json, logging, sys
from kafkaemu.logging import configure_logging, get_logger, request_context
out = io.StringIO()
log = get_logger("kafkaemu.test").bind(conn=7)
"""


def run(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PRELUDE + code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_events_below_the_level_import_nothing_and_the_first_one_emitted_is_rendered_as_configured():
    first, second, *lines = run("""
configure_logging("json", "warning", stream=out)
log.info("dropped")
log.debug("dropped")
print("structlog" in sys.modules)
with request_context(lambda: {"api": "Fetch"}):
    log.warning("kept", n=1)
print("structlog" in sys.modules)
print(out.getvalue(), end="")
""")
    assert (first, second) == ("False", "True")
    (event,) = [json.loads(line) for line in lines]
    assert (event["event"], event["level"], event["conn"], event["n"], event["api"]) == ("kept", "warning", 7, 1, "Fetch")


def test_without_configure_logging_every_event_goes_to_structlog_as_configured_there():
    lines = run("""
import structlog
structlog.configure(processors=[structlog.processors.JSONRenderer()],
                    logger_factory=structlog.PrintLoggerFactory(out))
log.debug("seen")
print(out.getvalue(), end="")
""")
    assert [json.loads(line) for line in lines] == [{"conn": 7, "event": "seen"}]


def test_a_program_that_configures_structlog_after_kafkaemu_keeps_its_configuration():
    lines = run("""
configure_logging("json", "warning", stream=io.StringIO())   # waits for structlog
import structlog
structlog.configure(processors=[structlog.processors.JSONRenderer()],
                    logger_factory=structlog.PrintLoggerFactory(out))
log.debug("seen")
print(out.getvalue(), end="")
""")
    assert [json.loads(line) for line in lines] == [{"conn": 7, "event": "seen"}]


def test_the_standard_librarys_records_are_rendered_once_one_arrives():
    lines = run("""
configure_logging("json", "warning", stream=out, stdlib=True)
print("structlog" in sys.modules)
logging.getLogger("asyncio").warning("from the stdlib")
print(out.getvalue(), end="")
""")
    assert lines[0] == "False"
    (event,) = [json.loads(line) for line in lines[1:]]
    assert (event["event"], event["level"], event["logger"]) == ("from the stdlib", "warning", "asyncio")


def test_a_held_event_waits_for_its_release_and_is_logged_before_any_later_event_once():
    """``hold`` (the server's ``listening`` event): structlog is not imported for it until the
    release, and an event logged meanwhile logs it first, so the order is kept and nothing twice."""
    lines = run("""
from kafkaemu.logging import hold
configure_logging("json", "info", stream=out)
release_first = hold(lambda: log.info("first"))
release_later = hold(lambda: log.info("released"))
print("structlog" in sys.modules)
log.info("second")
release_first()
print("structlog" in sys.modules)
release_later()
hold(lambda: log.info("now"))   # structlog imported: logged at once
print(out.getvalue(), end="")
""")
    assert lines[:2] == ["False", "True"]
    assert [json.loads(line)["event"] for line in lines[2:]] == ["first", "released", "second", "now"]


def test_a_held_event_is_logged_by_its_release():
    lines = run("""
from kafkaemu.logging import hold
configure_logging("json", "info", stream=out)
release = hold(lambda: log.info("held", n=2))
print(out.getvalue() == "")
release()
release()
print(out.getvalue(), end="")
""")
    assert lines[0] == "True"
    assert [(e["event"], e["n"]) for e in map(json.loads, lines[1:])] == [("held", 2)]
