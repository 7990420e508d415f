"""structlog set-up: one event per line, console or JSON, with connection/api/group context.

``kafkaemu serve`` also routes the standard library's logging (asyncio, uvloop, warnings) and
uncaught exceptions through the same renderer, so in JSON mode every log line is JSON. What is
not a log line stays plain: the ``kafkaemu listening on HOST:PORT`` lines on stdout (tools parse
them) and a setting error, printed before logging starts.

structlog is imported when an event is first emitted, not at start (its package imports all its
modules, about 12 ms): kafkaemu's modules take their loggers from ``get_logger`` (a ``LazyLogger``),
and ``configure_logging`` keeps its settings until then. While structlog is not imported, an event
below the configured level is dropped right away; once it is (by an event kafkaemu emits, or by
anyone else), every event goes through structlog as configured. ``hold`` keeps an event (the
server's ``listening``) until a little later, so that the import does not come between a start and
its first answer; an event logged meanwhile logs the held ones before itself.
"""
from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

_modules = sys.modules

# The request being handled, as a function building its log fields: set once per request (one
# context-variable write, not one per field) and only called when an event is actually logged.
_request_context: ContextVar[Callable[[], dict] | None] = ContextVar("kafkaemu_request_context", default=None)


# ``bind_request_context(fields)``: until ``unbind_request_context(token)``, every event logged
# carries ``fields()`` (connection, client, api, group, ...); returns the token. The context
# variable's own methods, not functions around them: every request calls both.
bind_request_context: Callable[[Callable[[], dict]], Any] = _request_context.set
unbind_request_context: Callable[[Any], None] = _request_context.reset


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
    process kafkaemu owns, not for a test session that has its own logging). Applied when
    structlog is first needed, or now if it is imported already."""
    level_no = log_level(level)
    stream = stream or sys.stderr
    if stdlib:
        _route_stdlib_logging(stream, level_no, fmt == "json")
    if "structlog" in _modules:
        _Lazy.pending, _Lazy.min_level = None, 0
        _configure_structlog(fmt, level_no, stream)
    else:
        _Lazy.pending, _Lazy.min_level = (fmt, level_no, stream), level_no


class _Lazy:
    pending: tuple | None = None   # configure_logging's settings, until structlog is imported
    min_level = 0                  # events below it are dropped while structlog is not imported
    held: list = []                # events held by ``hold``, logged before any later one


def _structlog():
    """structlog, imported (and configured as ``configure_logging`` asked) on first use; the
    events ``hold`` keeps are logged first."""
    import structlog
    pending = _Lazy.pending
    if pending is not None:
        _Lazy.pending, _Lazy.min_level = None, 0
        if not structlog.is_configured():   # nobody configured it meanwhile
            _configure_structlog(*pending)
    if _Lazy.held:
        held, _Lazy.held = _Lazy.held, []
        for emit in held:
            emit()
    return structlog


def hold(emit: Callable[[], None]) -> Callable[[], None]:
    """Keep an event (``emit`` logs it) until the returned function is called, so that importing
    structlog can wait; any other event logged first logs it before itself, keeping the order.
    With structlog imported already, the event is logged now."""
    if "structlog" in _modules:
        emit()
        return lambda: None

    def release() -> None:
        if emit in _Lazy.held:
            _Lazy.held.remove(emit)
            emit()
    _Lazy.held.append(emit)
    return release


def _renderers(json_mode: bool):
    import structlog
    renderer = structlog.processors.JSONRenderer() if json_mode else \
        structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
    exceptions = structlog.processors.format_exc_info if json_mode else structlog.processors.StackInfoRenderer()
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    return renderer, exceptions, timestamper


def _configure_structlog(fmt: str, level_no: int, stream) -> None:
    import structlog
    renderer, exceptions, timestamper = _renderers(fmt == "json")
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


def _strip_event(logger, method, event_dict):
    """warnings' messages end with a newline."""
    if isinstance(event_dict.get("event"), str):
        event_dict["event"] = event_dict["event"].rstrip()
    return event_dict


class _StructlogFormatter(logging.Formatter):
    """The standard library's records rendered as kafkaemu's events; structlog's formatter is
    built (and structlog imported) by the first record."""

    def __init__(self, json_mode: bool) -> None:
        super().__init__()
        self._json_mode = json_mode
        self._formatter: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._formatter is None:
            structlog = _structlog()
            renderer, exceptions, timestamper = _renderers(self._json_mode)
            self._formatter = structlog.stdlib.ProcessorFormatter(
                foreign_pre_chain=[structlog.stdlib.add_log_level, structlog.stdlib.add_logger_name, timestamper,
                                   _strip_event],
                processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, exceptions, renderer])
        return self._formatter.format(record)


def _route_stdlib_logging(stream, level_no: int, json_mode: bool) -> None:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_StructlogFormatter(json_mode))
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
    if _Lazy.pending is not None or ("structlog" in _modules and _modules["structlog"].is_configured()):
        return
    configure_logging("console", os.environ.get("KAFKAEMU_LOG_LEVEL", "warning"))


class LazyLogger:
    """What ``get_logger`` gives: structlog's logger of ``name`` (with the ``bind`` context),
    made on the first event that is not dropped (see the module's docstring)."""

    __slots__ = ("_name", "_context", "_logger")

    def __init__(self, name: str, context: dict | None = None) -> None:
        self._name, self._context, self._logger = name, context, None

    def _real(self):
        logger = self._logger
        if logger is None:
            logger = _structlog().get_logger(self._name)
            if self._context:
                logger = logger.bind(**self._context)
            self._logger = logger
        return logger

    def bind(self, **values: Any) -> "LazyLogger":
        return LazyLogger(self._name, {**self._context, **values} if self._context else values)

    def __getattr__(self, name: str):   # new, unbind, log, ...: structlog's own
        return getattr(self._real(), name)

    def __repr__(self) -> str:
        return f"<LazyLogger {self._name} {self._context or {}}>"


def _event_method(name: str, level: int):
    def emit(self, *args, **kwargs):
        if level < _Lazy.min_level and "structlog" not in _modules:
            return None
        return getattr(self._real(), name)(*args, **kwargs)
    emit.__name__ = name
    return emit


for _name, _level in (("debug", logging.DEBUG), ("info", logging.INFO), ("warning", logging.WARNING),
                      ("warn", logging.WARNING), ("error", logging.ERROR), ("exception", logging.ERROR),
                      ("critical", logging.CRITICAL), ("fatal", logging.CRITICAL)):
    setattr(LazyLogger, _name, _event_method(_name, _level))


def get_logger(name: str) -> LazyLogger:
    """The logger of a kafkaemu module (``log = get_logger("kafkaemu.broker")``)."""
    return LazyLogger(name)
