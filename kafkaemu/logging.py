"""structlog set-up: one event per line, console or JSON, with connection/api/group context.

``kafkaemu serve`` also routes the standard library's logging (asyncio, uvloop, warnings) and
uncaught exceptions through the same renderer, so in JSON mode every log line is JSON. What is
not a log line stays plain: the ``kafkaemu listening on HOST:PORT`` lines on stdout (tools parse
them) and a setting error, printed before logging starts.
"""
from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

import structlog

# The request being handled, as a function building its log fields: set once per request (one
# context-variable write, not one per field) and only called when an event is actually logged.
_request_context: ContextVar[Callable[[], dict] | None] = ContextVar("kafkaemu_request_context", default=None)


def bind_request_context(fields: Callable[[], dict]):
    """Until ``unbind_request_context(token)``, every event logged carries ``fields()``
    (connection, client, api, group, ...); returns the token."""
    return _request_context.set(fields)


def unbind_request_context(token) -> None:
    _request_context.reset(token)


@contextmanager
def request_context(fields: Callable[[], dict]) -> Iterator[None]:
    """Every event logged inside carries ``fields()`` (connection, client, api, group, ...)."""
    token = bind_request_context(fields)
    try:
        yield
    finally:
        unbind_request_context(token)


def current_request_context() -> dict:
    fields = _request_context.get()
    return fields() if fields is not None else {}


def merge_request_context(logger, method, event_dict):
    """structlog processor: the fields of the request being handled, unless the event sets them."""
    fields = _request_context.get()
    if fields is not None:
        for key, value in fields().items():
            event_dict.setdefault(key, value)
    return event_dict

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def log_level(name: str) -> int:
    """``"info"``, ``"INFO"``, ... -> logging.INFO; ValueError for a level kafkaemu does not have."""
    level = LEVELS.get(str(name).strip().lower())
    if level is None:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)} (any case), got {name!r}")
    return level


def configure_logging(fmt: str = "console", level: str = "info", stream=None, *, stdlib: bool = False) -> None:
    """Configure structlog; with ``stdlib``, the root logger and ``sys.excepthook`` too (for a
    process kafkaemu owns, not for a test session that has its own logging)."""
    level_no = log_level(level)
    stream = stream or sys.stderr
    json_mode = fmt == "json"
    renderer = structlog.processors.JSONRenderer() if json_mode else \
        structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
    exceptions = structlog.processors.format_exc_info if json_mode else structlog.processors.StackInfoRenderer()
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            merge_request_context,
            structlog.processors.add_log_level,
            timestamper,
            exceptions,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level_no),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=True,
    )
    if stdlib:
        _route_stdlib_logging(stream, level_no, [structlog.stdlib.add_log_level, structlog.stdlib.add_logger_name,
                                                 timestamper, _strip_event], exceptions, renderer)


def _strip_event(logger, method, event_dict):
    """warnings' messages end with a newline."""
    if isinstance(event_dict.get("event"), str):
        event_dict["event"] = event_dict["event"].rstrip()
    return event_dict


def _route_stdlib_logging(stream, level_no: int, pre_chain: list, exceptions, renderer) -> None:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=pre_chain,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, exceptions, renderer]))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level_no)
    logging.captureWarnings(True)
    crash_log = logging.getLogger("kafkaemu")

    def log_uncaught(exc_type, exc, tb):
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
        else:
            crash_log.critical("uncaught_exception", exc_info=(exc_type, exc, tb))
    sys.excepthook = log_uncaught


def configure_default_logging() -> None:
    """Warnings and errors on stderr (or ``KAFKAEMU_LOG_LEVEL``), unless structlog is already
    configured: structlog's own default would print every event, debug included, to stdout."""
    if not structlog.is_configured():
        configure_logging("console", os.environ.get("KAFKAEMU_LOG_LEVEL", "warning"))
