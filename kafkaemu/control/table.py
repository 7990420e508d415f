"""The table of control operations: each declared once, with ``@op`` on a ``Control`` method, and
everything else derived from it.

    @op("POST", "/api/clock/advance", ms=P(duration_ms, required=True, help="how far"),
        py=Py("advance_clock", lambda ms: {"ms": ms}, result="now_ms"),
        cli=Cli("clock advance", "ms"))

- the HTTP route (``METHOD PATH``; ``{name}`` segments are path parameters), served by
  ``control/http.py``, and ``GET /api``'s listing;
- the parameters, checked by ``control/params.py`` the same way for JSON bodies, query strings,
  Python calls and command lines;
- the ``KafkaEmulator`` methods (``control/python_api.py``): each ``Py`` names one, its mapping
  function's signature is the method's signature and its body maps the arguments to the
  operation's parameters; without a ``Py`` the method is the operation's own name, taking its
  parameters;
- the ``kafkaemu ctl`` commands (``control/cli.py``): each ``Cli`` gives the command words and the
  positional parameters; every other parameter is an option; without a ``Cli`` the command is the
  operation's name with dashes, and with ``cli=False`` there is none (``kafkaemu ctl`` writes its
  own: control/cli_records.py);
- the help text of all three: the method's docstring (its first paragraph on listings), each
  parameter's ``help``.
"""
from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from .params import Param


@dataclass(frozen=True)
class Py:
    """A ``KafkaEmulator`` method: ``params`` is called with the method's arguments (its signature
    is the method's) and returns the operation's parameters; ``result`` picks what the method
    returns (a key of the answer, or a function of it); ``on_error(exc)`` may turn a refusal into
    a return value (it re-raises what it does not handle)."""
    name: str
    params: Callable[..., dict] | None = None
    result: str | Callable[[Any], Any] | None = None
    on_error: Callable[[Exception], Any] | None = None
    doc: str | None = None


@dataclass(frozen=True)
class Cli:
    """A ``kafkaemu ctl`` command: ``words`` ("clock advance"), ``positional`` parameters in order.
    ``flags`` renames options ({"delay_ms": "--delay"}); ``switches`` adds flags that set a value
    ({"--offline": ("leaders", "offline")}); ``fixed`` parameters the command always sends (and
    does not offer); ``defaults`` differ from the API's (the ctl's ``--timeout 30s``)."""
    words: str
    positional: tuple[str, ...] = ()
    flags: dict[str, str] = field(default_factory=dict)
    switches: dict[str, tuple[str, Any]] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    help: str | None = None
    follow: bool = False   # offers --follow (keeps printing new entries)

    def __init__(self, words: str, *positional: str, **options: Any) -> None:
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "positional", positional)
        for name in ("flags", "switches", "fixed", "defaults"):
            object.__setattr__(self, name, options.pop(name, {}))
        object.__setattr__(self, "help", options.pop("help", None))
        object.__setattr__(self, "follow", options.pop("follow", False))
        if options:
            raise TypeError(f"Cli: unknown options {sorted(options)}")


@dataclass(frozen=True)
class Op:
    name: str
    method: str
    path: str
    params: dict[str, Param]
    is_async: bool
    doc: str
    full_doc: str
    py: tuple[Py, ...]
    cli: tuple[Cli, ...]

    @property
    def path_params(self) -> list[str]:
        return path_params(self.path)

    def describe(self) -> dict:
        return {"op": self.name, "method": self.method, "path": self.path, "doc": self.doc,
                "params": {n: {"required": p.required, "default": p.default, "help": p.help}
                           for n, p in self.params.items()}}


OPS: dict[str, Op] = {}


def _tuple(value) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


def op(method: str, path: str, *, py: Py | list[Py] | None = None, cli: Cli | list[Cli] | bool | None = None,
       **params: Param):
    """Register a ``Control`` method as an operation (see the module's docstring)."""
    def register(fn: Callable) -> Callable:
        name = fn.__name__
        if name in OPS:
            raise ValueError(f"control operation {name!r} declared twice")
        full = inspect.cleandoc(fn.__doc__ or "")
        pys = _tuple(py) or (Py(name),)
        clis = () if cli is False else _tuple(cli) or (Cli(name.replace("_", "-"), *path_params(path)),)
        for c in clis:
            unknown = (set(c.positional) | set(c.flags) | set(c.fixed) | set(c.defaults)
                       | {p for p, _ in c.switches.values()}) - set(params)
            if unknown:
                raise ValueError(f"{name}: ctl command {c.words!r} names unknown parameters {sorted(unknown)}")
        OPS[name] = Op(name, method, path, params, asyncio.iscoroutinefunction(fn),
                       full.split("\n\n")[0].replace("\n", " "), full, pys, clis)
        return fn
    return register


def path_params(path: str) -> list[str]:
    return [seg[1:-1] for seg in path.split("/") if seg.startswith("{")]


def P(parse, required: bool = False, default=None, help: str = "") -> Param:  # noqa: N802 (reads as a type)
    return Param(parse, required, default, help)
