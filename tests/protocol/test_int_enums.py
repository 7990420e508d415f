"""ErrorCode and ApiKey, made by ``int_enum`` (the standard library's ``_simple_enum``), are the
IntEnums the ``IntEnum`` metaclass makes of the same members, and so is the functional API's
class a Python without ``_simple_enum`` gets."""
import enum
import pickle

import pytest

from kafkaemu.protocol import int_enums
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import _KAFKA_ERRORS, ErrorCode


def made_by_the_metaclass(made):
    return enum.IntEnum(made.__name__, [(m.name, m.value) for m in made], module=made.__module__,
                        qualname=made.__qualname__)


def same_enum(made, reference):
    assert issubclass(made, enum.IntEnum) and type(made) is type(reference)
    assert [(m.name, m.value) for m in made] == [(m.name, m.value) for m in reference]
    assert list(made.__members__) == list(reference.__members__)
    for member, ref in zip(made, reference):
        assert made(ref.value) is member and made[ref.name] is member and getattr(made, ref.name) is member
        assert isinstance(member, int) and member == ref.value and hash(member) == hash(ref.value)
        assert repr(member) == repr(ref) and str(member) == str(ref) and f"{member}" == f"{ref}"
        assert format(member, "d") == format(ref, "d")
        assert pickle.loads(pickle.dumps(member)) is member
    with pytest.raises(ValueError):
        made(10_000)
    with pytest.raises(KeyError):
        made["NOT_A_MEMBER"]


@pytest.mark.parametrize("made", [ErrorCode, ApiKey], ids=lambda e: e.__name__)
def test_int_enum_makes_the_metaclass_s_enum(made):
    reference = made_by_the_metaclass(made)
    same_enum(made, reference)
    if hasattr(enum, "_test_simple_enum"):   # the standard library's own check of a _simple_enum class
        enum._test_simple_enum(reference, made)


def test_error_codes_are_kafka_s_list():
    assert [(m.name, m.value) for m in ErrorCode] == _KAFKA_ERRORS
    assert ErrorCode.__doc__.startswith("Kafka protocol error codes")
    assert ErrorCode.UNKNOWN_MEMBER_ID == 25 and ApiKey.API_VERSIONS == 18


def test_without_simple_enum_the_functional_api_gives_the_same(monkeypatch):
    monkeypatch.setattr(int_enums, "_SIMPLE_ENUM", None)
    plain = type("ErrorCode", (), {"__module__": ErrorCode.__module__, "__qualname__": "ErrorCode",
                                   "__doc__": ErrorCode.__doc__, **dict(_KAFKA_ERRORS)})
    fallback = int_enums.int_enum(plain)
    assert fallback is not ErrorCode and fallback.__doc__ == ErrorCode.__doc__
    assert [(m.name, m.value) for m in fallback] == [(m.name, m.value) for m in ErrorCode]
    assert repr(fallback(25)) == repr(ErrorCode(25)) and fallback.__module__ == ErrorCode.__module__
