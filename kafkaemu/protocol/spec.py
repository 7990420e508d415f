"""Parser for kafkaemu's declarative message definitions (``protocol_specs/*.spec``).

A spec file holds one or more messages. A message starts at column 0::

    request  11  JoinGroupRequest  versions:0-9  flexible:6+

and its fields follow, indented two spaces per nesting level::

    group_instance_id: string  v5+  null:5+  default:null
    protocols: []JoinGroupRequestProtocol
      name: string

Field attributes: ``vR`` versions the field exists in (default: all), ``null:R`` versions in
which it may be null, ``default:X``, ``tag:N`` with ``tagged:R`` for tagged fields, and
``flex:R`` to override the message's flexible versions for one field (the request header's
client id is never compact). ``R`` is ``N``, ``N+``, ``N-M`` or ``none``. ``#`` starts a comment.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

PRIMITIVES = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64",
     "string", "bytes", "records", "uuid"}
)


class SpecError(ValueError):
    pass


@dataclass(frozen=True)
class VersionRange:
    """A version range of Kafka's message JSON (``"0+"``, ``"3-7"``, ``"none"``)."""
    lo: int
    hi: int | None  # None: open ended. lo > hi encodes "none".

    @classmethod
    def parse(cls, text: str) -> "VersionRange":
        text = text.strip()
        if text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return version >= self.lo and (self.hi is None or version <= self.hi)

    @property
    def empty(self) -> bool:
        return self.hi is not None and self.lo > self.hi

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi is None:
            return f"{self.lo}+"
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


ALL = VersionRange(0, None)
NONE = VersionRange(1, 0)


@dataclass
class FieldSpec:
    """One field of a message spec, with the versions it exists, is nullable, tagged, in."""
    name: str
    type: str
    versions: VersionRange = ALL
    nullable: VersionRange = NONE
    default: str | None = None
    tag: int | None = None
    tagged: VersionRange = NONE
    flex: VersionRange | None = None
    fields: list["FieldSpec"] = field(default_factory=list)

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """True when the field (or its array elements) is a struct with fields of its own."""
        return self.element_type not in PRIMITIVES


@dataclass
class MessageSpec:
    """One message spec (a request, a response, a header or a data record) of Kafka's message JSON."""
    kind: str  # request | response | header | data
    name: str
    versions: VersionRange
    flexible: VersionRange
    api_key: int | None = None
    fields: list[FieldSpec] = field(default_factory=list)

    @property
    def version_list(self) -> list[int]:
        assert self.versions.hi is not None, self.name
        return list(range(self.versions.lo, self.versions.hi + 1))


# a message line, matched against one line (which holds no newline, so MULTILINE changes nothing
# there) or found anywhere in a file's text (the catalogue indexes files by them before parsing):
# one pattern, compiled once
MESSAGE_LINE = re.compile(r"^(request|response|header|data)\s+(?:(\d+)\s+)?(\w+)\s+(.*)$", re.MULTILINE)
_FIELD = re.compile(r"^(\s*)(\w+):\s*(\S+)\s*(.*)$")


def _attrs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for token in text.split():
        if ":" in token:
            k, v = token.split(":", 1)
            out[k] = v
        elif token.startswith("v"):
            out["v"] = token[1:]
        else:
            raise SpecError(f"unknown attribute {token!r}")
    return out


def parse_spec(text: str, source: str = "<spec>") -> list[MessageSpec]:
    messages: list[MessageSpec] = []
    stack: list[tuple[int, list[FieldSpec]]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        if not line[0].isspace():
            m = MESSAGE_LINE.match(line)
            if not m:
                raise SpecError(f"{where}: bad message line {raw!r}")
            kind, key, name, rest = m.groups()
            attrs = _attrs(rest)
            msg = MessageSpec(
                kind=kind, name=name, api_key=int(key) if key else None,
                versions=VersionRange.parse(attrs["versions"]),
                flexible=VersionRange.parse(attrs.get("flexible", "none")),
            )
            messages.append(msg)
            stack = [(0, msg.fields)]
            continue
        m = _FIELD.match(line)
        if not m or not stack:
            raise SpecError(f"{where}: bad field line {raw!r}")
        indent, name, typ, rest = m.groups()
        depth = len(indent) // 2
        if len(indent) % 2 or depth > len(stack):
            raise SpecError(f"{where}: bad indentation")
        del stack[depth:]
        attrs = _attrs(rest)
        f = FieldSpec(
            name=name, type=typ,
            versions=VersionRange.parse(attrs.get("v", "0+")),
            nullable=VersionRange.parse(attrs.get("null", "none")),
            default=attrs.get("default"),
            tag=int(attrs["tag"]) if "tag" in attrs else None,
            tagged=VersionRange.parse(attrs.get("tagged", "none")),
            flex=VersionRange.parse(attrs["flex"]) if "flex" in attrs else None,
        )
        stack[-1][1].append(f)
        stack.append((depth + 1, f.fields))
    for msg in messages:
        _check(msg.fields, f"{source}:{msg.name}")
    return messages


def _check(fields: list[FieldSpec], where: str) -> None:
    for f in fields:
        if f.is_struct and not f.fields:
            raise SpecError(f"{where}.{f.name}: struct type {f.type} has no fields")
        if not f.is_struct and f.fields:
            raise SpecError(f"{where}.{f.name}: primitive type {f.type} cannot have fields")
        if f.tag is not None and f.tagged.empty:
            raise SpecError(f"{where}.{f.name}: tag without tagged versions")
        _check(f.fields, f"{where}.{f.name}")


def load_spec_dir(directory) -> list[MessageSpec]:
    """Every message of the ``*.spec`` files under ``directory`` (a path or its string), in path order."""
    from pathlib import Path
    directory = Path(directory)
    messages: list[MessageSpec] = []
    for path in sorted(directory.rglob("*.spec")):
        messages.extend(parse_spec(path.read_text(), str(path.relative_to(directory))))
    return messages
