"""Kafka's wire types as ``construct`` classes: the reference codec (``codegen``) is built of them.

Each class has a plain ``_parse``/``_build`` and an ``_emitparse``/``_emitbuild`` so that
``.compile()`` inlines it. Both paths call the bounds-checked helpers of ``primitives``, so a
truncated or hostile body raises :class:`DecodeError` on either path (construct's own checks raise
``ConstructError``s); the plain codec is still kept as the error path because its messages name the
failing field. ``build_struct`` makes the reference codec of one message version from its spec.
"""
from __future__ import annotations

import io as _io
import struct

from construct import Construct, Container, Float64b, FormatField, Int8sb, Int16sb, Int16ub, Int32sb, Int32ub, Int64sb

from .defaults import field_default, is_default, shape_default
from .spec import FieldSpec
from .primitives import (DecodeError, read_array_len, read_bytes, read_exact, read_string, read_tagged_header,
                         read_uvarint, write_array_len, write_bytes, write_string, write_tagged)


def _kp_import(code) -> str:
    """Import the helpers into compiled code: ``_kp`` (``primitives``) and ``_kd`` (``defaults``)."""
    if not getattr(code, "_kafkaemu_imported", False):
        code.append("import kafkaemu.protocol.primitives as _kp\nimport kafkaemu.protocol.defaults as _kd\n")
        code._kafkaemu_imported = True
    return "_kp"


class KBool(Construct):
    """BOOLEAN: one byte, anything but zero is true."""

    def _parse(self, stream, context, path):
        return read_exact(stream, 1) != b"\x00"

    def _build(self, obj, stream, context, path):
        stream.write(b"\x01" if obj else b"\x00")
        return obj

    def _emitparse(self, code):
        return f"({_kp_import(code)}.read_exact(io, 1) != b'\\x00')"

    def _emitbuild(self, code):
        return "(io.write(b'\\x01' if obj else b'\\x00'), obj)[1]"


class KUuid(Construct):
    """UUID: 16 raw bytes (construct's compiled ``Bytes`` would accept a short read)."""

    def _parse(self, stream, context, path):
        return read_exact(stream, 16)

    def _build(self, obj, stream, context, path):
        if len(obj) != 16:
            raise DecodeError(f"uuid must be 16 bytes, got {len(obj)}")
        stream.write(obj)
        return obj

    def _emitparse(self, code):
        return f"{_kp_import(code)}.read_exact(io, 16)"

    def _emitbuild(self, code):
        return f"{_kp_import(code)}.write_uuid(io, obj)"


class KString(Construct):
    """STRING / COMPACT_STRING, optionally NULLABLE."""

    def __init__(self, compact: bool, nullable: bool):
        super().__init__()
        self.compact, self.nullable = compact, nullable

    def _parse(self, stream, context, path):
        return read_string(stream, self.compact, self.nullable)

    def _build(self, obj, stream, context, path):
        write_string(stream, obj, self.compact, self.nullable)
        return obj

    def _emitparse(self, code):
        kp = _kp_import(code)
        return f"{kp}.read_string(io, {self.compact}, {self.nullable})"

    def _emitbuild(self, code):
        kp = _kp_import(code)
        return f"({kp}.write_string(io, obj, {self.compact}, {self.nullable}), obj)[1]"


class KBytes(KString):
    """BYTES / COMPACT_BYTES / RECORDS, optionally NULLABLE."""

    def _parse(self, stream, context, path):
        return read_bytes(stream, self.compact, self.nullable)

    def _build(self, obj, stream, context, path):
        write_bytes(stream, obj, self.compact, self.nullable)
        return obj

    def _emitparse(self, code):
        return f"{_kp_import(code)}.read_bytes(io, {self.compact}, {self.nullable})"

    def _emitbuild(self, code):
        kp = _kp_import(code)
        return f"({kp}.write_bytes(io, obj, {self.compact}, {self.nullable}), obj)[1]"


class KArray(Construct):
    """ARRAY / COMPACT_ARRAY of one element construct, optionally NULLABLE."""

    def __init__(self, subcon: Construct, compact: bool, nullable: bool):
        super().__init__()
        self.subcon, self.compact, self.nullable = subcon, compact, nullable

    def _parse(self, stream, context, path):
        n = read_array_len(stream, self.compact, self.nullable)
        if n is None:
            return None
        sc = self.subcon
        return [sc._parsereport(stream, context, path) for _ in range(n)]

    def _build(self, obj, stream, context, path):
        write_array_len(stream, obj, self.compact, self.nullable)
        for item in obj or ():
            self.subcon._build(item, stream, context, path)
        return obj

    def _emitparse(self, code):
        kp = _kp_import(code)
        fname = f"parse_karray_{code.allocateId()}"
        if isinstance(self.subcon, FormatField):
            # Numbers: one bounds-checked read and one unpack for the whole array.
            char, size = self.subcon.fmtstr[1:], self.subcon.length
            code.append(f"""
def {fname}(io, this):
    n = {kp}.read_array_len(io, {self.compact}, {self.nullable})
    if n is None:
        return None
    return list(struct.unpack(f'>{{n}}{char}', {kp}.read_exact(io, n * {size})))
""")
            return f"{fname}(io, this)"
        code.append(f"""
def {fname}(io, this):
    n = {kp}.read_array_len(io, {self.compact}, {self.nullable})
    if n is None:
        return None
    return [{self.subcon._compileparse(code)} for _ in range(n)]
""")
        return f"{fname}(io, this)"

    def _emitbuild(self, code):
        kp = _kp_import(code)
        fname = f"build_karray_{code.allocateId()}"
        if isinstance(self.subcon, FormatField):
            char = self.subcon.fmtstr[1:]
            code.append(f"""
def {fname}(items, io, this):
    {kp}.write_array_len(io, items, {self.compact}, {self.nullable})
    if items:
        io.write(struct.pack(f'>{{len(items)}}{char}', *items))
    return items
""")
            return f"{fname}(obj, io, this)"
        code.append(f"""
def {fname}(items, io, this):
    {kp}.write_array_len(io, items, {self.compact}, {self.nullable})
    for obj in items or ():
        {self.subcon._compilebuild(code)}
    return items
""")
        return f"{fname}(obj, io, this)"


class KOptional(Construct):
    """A nullable struct: INT8 -1 for null, 1 followed by the struct."""

    def __init__(self, subcon: Construct):
        super().__init__()
        self.subcon = subcon

    def _parse(self, stream, context, path):
        if read_exact(stream, 1)[0] & 0x80:  # Kafka reads any negative marker as null
            return None
        return self.subcon._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            stream.write(b"\xff")
            return None
        stream.write(b"\x01")
        return self.subcon._build(obj, stream, context, path)

    def _emitparse(self, code):
        kp = _kp_import(code)
        fname = f"parse_koptional_{code.allocateId()}"
        code.append(f"""
def {fname}(io, this):
    if {kp}.read_exact(io, 1)[0] & 0x80:
        return None
    return {self.subcon._compileparse(code)}
""")
        return f"{fname}(io, this)"

    def _emitbuild(self, code):
        fname = f"build_koptional_{code.allocateId()}"
        code.append(f"""
def {fname}(obj, io, this):
    if obj is None:
        io.write(b'\\xff')
        return None
    io.write(b'\\x01')
    return {self.subcon._compilebuild(code)}
""")
        return f"{fname}(obj, io, this)"


def _runs(fields):
    """Split ``(name, construct, default)`` fields into runs: consecutive fixed-width numbers
    (construct ``FormatField``s, read or written with one ``struct`` call in compiled code)
    and single other fields."""
    runs, fixed = [], []
    for entry in fields:
        if isinstance(entry[1], FormatField):
            fixed.append(entry)
            continue
        if fixed:
            runs.append(fixed)
            fixed = []
        runs.append(entry)
    if fixed:
        runs.append(fixed)
    return runs


def _fixed_struct(code, run) -> tuple[str, int]:
    fmt = ">" + "".join(sc.fmtstr[1:] for _, sc, _ in run)
    name = f"kfixed_{code.allocateId()}"
    code.append(f"{name} = struct.Struct({fmt!r})")
    return name, struct.calcsize(fmt)


class KStruct(Construct):
    """A struct: fields in order, then (when flexible) the tagged-field section.

    ``fields`` and ``tagged`` hold ``(name, construct, default)``; ``tagged`` is keyed by tag;
    ``absent`` holds ``(name, default)`` of the fields this version lacks, which decoding fills
    in so every version decodes to one shape; ``fill`` maps a tagged field's name to the value
    decoding gives when the tag is not sent (its default in that shape). Building takes any mapping and uses the default
    for a missing key, so a response built in the newest shape encodes to every version.
    Tagged fields at their default are omitted, as Kafka does.
    """

    def __init__(self, fields, tagged: dict | None, flexible: bool, absent=(), fill=None):
        super().__init__()
        self.kfields = list(fields)
        self.ktagged = dict(sorted((tagged or {}).items()))
        self.kabsent = list(absent)
        self.kfill = dict(fill or {})
        self.flexible = flexible

    def _parse(self, stream, context, path):
        result = Container()
        for name, sc, _ in self.kfields:
            result[name] = sc._parsereport(stream, context, f"{path} -> {name}")
        if self.flexible:
            for name, _, default in self.ktagged.values():
                result[name] = fresh(self.kfill.get(name, default))
            for _ in range(read_uvarint(stream)):
                tag, data = read_tagged_header(stream)
                entry = self.ktagged.get(tag)
                if entry is not None:
                    name, sc, _ = entry
                    result[name] = sc._parsereport(_io.BytesIO(data), context, f"{path} -> {name}")
        for name, default in self.kabsent:
            result[name] = fresh(default)
        return result

    def _build(self, obj, stream, context, path):
        get = obj.get
        for name, sc, default in self.kfields:
            sc._build(get(name, default), stream, context, f"{path} -> {name}")
        if self.flexible:
            entries = []
            for tag, (name, sc, default) in self.ktagged.items():
                value = get(name, default)
                if value is not default and not is_default(value, default):
                    sub = _io.BytesIO()
                    sc._build(value, sub, context, path)
                    entries.append((tag, sub.getvalue()))
            write_tagged(stream, entries)
        return obj

    def _emitparse(self, code):
        kp = _kp_import(code)
        fname = f"parse_kstruct_{code.allocateId()}"
        lines = [f"def {fname}(io, this):", "    result = Container()"]
        for run in _runs(self.kfields):
            if isinstance(run, list):
                if len(run) == 1:
                    name, sc, _ = run[0]
                    lines.append(f"    result[{name!r}] = {sc._compileparse(code)}")
                    continue
                packer, size = _fixed_struct(code, run)
                targets = ", ".join(f"result[{name!r}]" for name, _, _ in run)
                lines.append(f"    ({targets},) = {packer}.unpack(io.read({size}))")
            else:
                name, sc, _ = run
                lines.append(f"    result[{name!r}] = {sc._compileparse(code)}")
        if self.flexible:
            for name, _, default in self.ktagged.values():
                lines.append(f"    result[{name!r}] = {default_source(self.kfill.get(name, default))}")
            # Most structs carry no tagged fields: one zero byte.
            lines.append("    tags = io.read(1)")
            lines.append("    if tags != b'\\x00':")
            lines.append("        io.seek(-len(tags), 1)")
            lines.append(f"        for _ in range({kp}.read_uvarint(io)):")
            lines.append(f"            tag, data = {kp}.read_tagged_header(io)")
            for tag, (name, sc, _) in self.ktagged.items():
                lines.append(f"            if tag == {tag}:")
                lines.append(f"                result[{name!r}] = restream(data, lambda io: {sc._compileparse(code)})")
        for name, default in self.kabsent:
            lines.append(f"    result[{name!r}] = {default_source(default)}")
        lines.append("    return result")
        code.append("\n".join(lines) + "\n")
        return f"{fname}(io, this)"

    def _emitbuild(self, code):
        kp = _kp_import(code)
        fname = f"build_kstruct_{code.allocateId()}"
        lines = [f"def {fname}(objdict, io, this):", "    get = objdict.get"]
        for run in _runs(self.kfields):
            if isinstance(run, list) and len(run) > 1:
                packer, _ = _fixed_struct(code, run)
                values = ", ".join(f"get({name!r}, {default!r})" for name, _, default in run)
                lines.append(f"    io.write({packer}.pack({values}))")
                continue
            name, sc, default = run[0] if isinstance(run, list) else run
            lines.append(f"    obj = get({name!r}, {default!r})")
            lines.append(f"    {sc._compilebuild(code)}")
        if self.flexible and not self.ktagged:
            lines.append("    io.write(b'\\x00')")
        elif self.flexible:
            lines.append("    entries = []")
            for tag, (name, sc, default) in self.ktagged.items():
                lines.append(f"    obj = get({name!r}, {default!r})")
                lines.append(f"    if not _kd.is_default(obj, {default!r}):")
                lines.append("        sub = io; io = BytesIO()")
                lines.append(f"        {sc._compilebuild(code)}")
                lines.append(f"        entries.append(({tag}, io.getvalue())); io = sub")
            lines.append(f"    {kp}.write_tagged(io, entries)")
        lines.append("    return objdict")
        code.append("\n".join(lines) + "\n")
        return f"{fname}(obj, io, this)"


def fresh(default):
    """A new copy of a default, so no decoded message shares a mutable default with another."""
    if isinstance(default, dict):
        return Container({k: fresh(v) for k, v in default.items()})
    if isinstance(default, list):
        return []
    return default


def default_source(default) -> str:
    """Python source that evaluates to ``fresh(default)`` (for compiled codecs)."""
    if isinstance(default, dict):
        return "Container({%s})" % ", ".join(f"{k!r}: {default_source(v)}" for k, v in default.items())
    if isinstance(default, list):
        return "[]"
    return repr(default)


_FIXED: dict[str, Construct] = {
    "bool": KBool(), "int8": Int8sb, "int16": Int16sb, "int32": Int32sb, "int64": Int64sb,
    "uint16": Int16ub, "uint32": Int32ub, "float64": Float64b, "uuid": KUuid(),
}

def _field_construct(f: FieldSpec, version: int, flexible: bool) -> Construct:
    compact = flexible if f.flex is None else version in f.flex
    nullable = version in f.nullable
    elem = f.element_type
    if f.is_struct:
        sub = build_struct(f.fields, version, flexible)
    elif elem in ("string",):
        sub = KString(compact, nullable and not f.is_array)
    elif elem in ("bytes", "records"):
        sub = KBytes(compact, nullable and not f.is_array)
    else:
        sub = _FIXED[elem]
    if f.is_array:
        return KArray(sub, compact, nullable)
    if f.is_struct and nullable:
        return KOptional(sub)
    return sub


def build_struct(fields: list[FieldSpec], version: int, flexible: bool) -> KStruct:
    plain, tagged, absent, fill = [], {}, [], {}
    for f in fields:
        if version not in f.versions:
            absent.append((f.name, shape_default(f)))
            continue
        entry = (f.name, _field_construct(f, version, flexible), field_default(f, version))
        if flexible and version in f.tagged:
            tagged[f.tag] = entry
            fill[f.name] = shape_default(f)  # what decoding gives when the tag is not sent
        else:
            plain.append(entry)
    return KStruct(plain, tagged, flexible, absent, fill)
