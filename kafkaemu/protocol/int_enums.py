"""Large IntEnum classes made as the standard library makes its own (``http.HTTPStatus``,
``re.RegexFlag``, ``ast``'s, ``IntEnum._convert_``): ``enum._simple_enum`` builds the members of a
plain class directly, where the ``class X(IntEnum)`` statement and ``IntEnum(name, pairs)`` run
the ``EnumType`` metaclass's per-member machinery (``__set_name__``, the alias and descriptor
bookkeeping). The result is the same IntEnum (members, values, names, order, ``X(value)``,
``X[name]``, repr, pickling: ``tests/protocol/test_int_enums.py`` compares them member by member),
made in about a third of the time: ``ErrorCode`` and ``ApiKey``, which every start imports, cost
about 1.4 ms the other way. A Python without ``_simple_enum`` gets the functional API's class."""
from __future__ import annotations

import enum

_SIMPLE_ENUM = getattr(enum, "_simple_enum", None)


def int_enum(plain: type) -> type[enum.IntEnum]:
    """The IntEnum whose members are ``plain``'s public class attributes, in their order, with its
    name, module and docstring."""
    if _SIMPLE_ENUM is not None:
        return _SIMPLE_ENUM(enum.IntEnum)(plain)
    members = [(name, value) for name, value in vars(plain).items() if not name.startswith("_")]
    made = enum.IntEnum(plain.__name__, members, module=plain.__module__, qualname=plain.__qualname__)
    made.__doc__ = plain.__doc__
    return made
