"""The ``KafkaEmulator`` methods of the control operations, made from the table (control/table.py).

Each ``Py`` of an operation becomes one method: its signature is the ``Py``'s mapping function's
(or, without one, the operation's parameters: path parameters first, the rest keyword-only with
their defaults), its docstring the ``Py``'s or the operation's. A call maps the arguments to the
operation's parameters and runs ``emulator.control(op, **params)``, in-process or over HTTP alike.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from .table import OPS, Op, Py


def default_signature(spec: Op) -> inspect.Signature:
    """The operation's own parameters: path parameters positional, the others keyword-only."""
    path = spec.path_params
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in path]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None if p.required else p.default)
               for n, p in spec.params.items() if n not in path]
    return inspect.Signature(params)


def mapping(spec: Op, py: Py) -> tuple[Callable[..., dict], inspect.Signature]:
    """(arguments -> the operation's parameters, the method's signature without ``self``)."""
    if py.params is not None:
        return py.params, inspect.signature(py.params)
    signature = default_signature(spec)

    def params(*args, **kwargs) -> dict:
        return dict(signature.bind(*args, **kwargs).arguments)
    return params, signature


def _result(py: Py, answer):
    if py.result is None:
        return answer
    if callable(py.result):
        return py.result(answer)
    return answer[py.result]


def make_method(spec: Op, py: Py) -> Callable:
    to_params, signature = mapping(spec, py)
    op_name = spec.name

    def method(self, *args, **kwargs) -> Any:
        params = to_params(*args, **kwargs)
        try:
            answer = self.control(op_name, **params)
        except Exception as exc:
            if py.on_error is None:
                raise
            return py.on_error(exc)
        return _result(py, answer)

    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(parameters=[self_param, *signature.parameters.values()])
    method.__name__ = method.__qualname__ = py.name
    method.__doc__ = (py.doc or spec.full_doc) + f"\n\n(control operation ``{op_name}``: {spec.method} {spec.path})"
    method.control_op = op_name
    return method


def methods() -> dict[str, Callable]:
    """Method name -> method, for every ``Py`` of every operation."""
    out: dict[str, Callable] = {}
    for spec in OPS.values():
        for py in spec.py:
            if py.name in out:
                raise ValueError(f"KafkaEmulator.{py.name} is declared by {out[py.name].control_op} and {spec.name}")
            out[py.name] = make_method(spec, py)
    return out


def install(cls: type) -> type:
    """Give ``cls`` (KafkaEmulator) a method for every ``Py``; a name the class defines itself is
    an error, so a generated method never silently loses to a hand-written one."""
    from . import operations  # noqa: F401 (fills OPS)
    for name, method in methods().items():
        if name in vars(cls):
            raise TypeError(f"{cls.__name__}.{name} is both written by hand and generated from the control table")
        setattr(cls, name, method)
    return cls
