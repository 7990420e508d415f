"""Straight-line Python codecs generated from the specs, one per (message, version): the hot path.

As Kafka generates a Java class per message from its JSON definitions, this module writes the
Python source of a decoder and an encoder for each (message, version) of ``protocol_specs/`` and
compiles it once (the code is kept between runs by ``codec_cache``): fixed-width runs are one ``struct`` call on a precomputed format, strings and
arrays are read with ``unpack_from`` at an offset (no stream objects, no per-field calls through
``construct``). The ``construct`` codec of ``codegen.Codec`` stays the reference: it decodes what
this one rejects (so errors keep its messages) and the tests check both agree on every message.

Decoded structs are dicts of a class generated per struct shape whose fields are properties
(``body.group_id`` costs a C-level item lookup, not ``Container.__getattr__``); every version of a
message decodes to the same keys, as with the reference codec.

A ``bytes``/``records`` field encodes a bytes-like value or a list/tuple of bytes-like chunks (the
bytes of ``b"".join(chunks)``); ``encode_chunks`` keeps such chunks apart so a fetched batch is
handed to the transport without being copied into one big ``bytes``.
"""
from __future__ import annotations

import struct
from operator import itemgetter

from .codec_cache import compile_codec
from .defaults import field_default, is_default, shape_default
from .primitives import _ONE_BYTE, DecodeError, uvarint_bytes
from .spec import FieldSpec, MessageSpec

_FIXED = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
          "float64": "d", "bool": "?"}
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_NULL_ARRAY = {True: "b'\\x00'", False: "b'\\xff\\xff\\xff\\xff'"}
BIG_CHUNK = 16384  # chunks at least this long are kept apart by encode_chunks (never copied)


class Truncated(DecodeError):
    pass


def read_uvarint(data, pos: int) -> tuple[int, int]:
    """An unsigned varint at ``pos``: (value, position after it)."""
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise DecodeError("varint too long")


uvarint = uvarint_bytes   # the encoders' varint is the reference codec's


def chunks_len(value) -> int:
    """Bytes in a bytes-like value or a list/tuple of bytes-like chunks."""
    if isinstance(value, (list, tuple)):
        return sum(map(len, value))
    return len(value)


def _getattr(self, name):
    try:
        return self[name]
    except KeyError:
        raise AttributeError(name) from None


_shapes: dict[tuple[str, ...], type] = {}


def message_class(names: tuple[str, ...]) -> type:
    """The dict class of a decoded struct with these fields: attribute access by property."""
    cls = _shapes.get(names)
    if cls is None:
        ns = {n: property(itemgetter(n)) for n in names}
        ns.update(__slots__=(), __setattr__=dict.__setitem__, __getattr__=_getattr, __module__=__name__)
        cls = _shapes[names] = type("Message", (dict,), ns)
    return cls


class _Gen:
    """Source of one (message, version): functions d<N>(data, pos) -> (obj, pos) and e<N>(obj, out)."""

    def __init__(self, version: int):
        self.version = version
        self.lines: list[str] = []
        self.ns: dict = {"struct": struct, "DecodeError": DecodeError, "Truncated": Truncated,
                         "uv": read_uvarint, "uvb": uvarint, "ONE": _ONE_BYTE, "I16": _I16, "I32": _I32,
                         "is_default": is_default, "clen": chunks_len}
        self.count = 0
        self.has_chunks = False

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value) -> str:
        name = self.name("K")
        self.ns[name] = value
        return name

    def packer(self, fmt: str) -> str:
        return self.const(struct.Struct(">" + fmt))

    # -- defaults ----------------------------------------------------------------------------
    def default_expr(self, f: FieldSpec, version: int | None) -> str:
        """Source of a fresh default: ``version`` None for the shape default (every child)."""
        if f.is_array:
            return "None" if f.default == "null" else "[]"
        if f.is_struct:
            if f.default == "null":
                return "None"
            kids = [c for c in f.fields if version is None or version in c.versions]
            cls = self.const(message_class(tuple(c.name for c in f.fields) if version is None
                                           else self.shape_names(f.fields)))
            return f"{cls}({{{', '.join(f'{c.name!r}: {self.default_expr(c, version)}' for c in kids)}}})"
        value = shape_default(f) if version is None else field_default(f, version)
        return repr(value)

    def shape_names(self, fields: list[FieldSpec]) -> tuple[str, ...]:
        """Keys of a decoded struct, in the reference codec's order: plain, tagged, absent."""
        v = self.version
        plain = [f.name for f in fields if v in f.versions and not (self.flex and v in f.tagged)]
        tagged = [f.name for f in sorted((f for f in fields if v in f.versions and self.flex and v in f.tagged),
                                         key=lambda f: f.tag)]
        absent = [f.name for f in fields if v not in f.versions]
        return tuple(plain + tagged + absent)

    # -- decoding ----------------------------------------------------------------------------
    def read_len(self, out: list[str], ind: str, var: str, compact: bool, wide: bool) -> None:
        if compact:
            out.append(f"{ind}{var} = data[pos]")
            out.append(f"{ind}if {var} < 0x80: pos += 1")
            out.append(f"{ind}else: {var}, pos = uv(data, pos)")
            out.append(f"{ind}{var} -= 1")
        elif wide:
            out.append(f"{ind}{var}, = I32.unpack_from(data, pos); pos += 4")
        else:
            out.append(f"{ind}{var}, = I16.unpack_from(data, pos); pos += 2")

    def read_value(self, f: FieldSpec, elem: bool, out: list[str], ind: str, target: str) -> None:
        """Lines that decode one value of ``f`` (an element when ``elem``) into ``target``."""
        v = self.version
        compact = self.flex if f.flex is None else v in f.flex
        nullable = v in f.nullable and not (elem and not f.is_struct)
        typ = f.element_type
        if f.is_struct:
            fn = self.struct_decoder(f.fields)
            if nullable and not elem:  # a nullable struct: int8 marker
                out.append(f"{ind}if data[pos] & 0x80: pos += 1; {target} = None")
                out.append(f"{ind}else: {target}, pos = {fn}(data, pos + 1)")
            else:
                out.append(f"{ind}{target}, pos = {fn}(data, pos)")
            return
        if typ in _FIXED:
            p = self.packer(_FIXED[typ])
            out.append(f"{ind}{target}, = {p}.unpack_from(data, pos); pos += {struct.calcsize('>' + _FIXED[typ])}")
            return
        if typ == "uuid":
            out.append(f"{ind}{target} = data[pos:pos + 16]; pos += 16")
            out.append(f"{ind}if len({target}) != 16: raise Truncated('uuid')")
            return
        string = typ == "string"
        nullable = v in f.nullable and not f.is_array
        self.read_len(out, ind, "n", compact, not string)
        out.append(f"{ind}if n < 0:")
        out.append(f"{ind}    if {nullable} and n == -1: {target} = None")
        out.append(f"{ind}    else: raise DecodeError('invalid length %d' % n)")
        out.append(f"{ind}else:")
        out.append(f"{ind}    end = pos + n")
        out.append(f"{ind}    if end > len(data): raise Truncated('{f.name}')")
        if string:
            out.append(f"{ind}    {target} = str(data[pos:end], 'utf-8'); pos = end")
        else:
            out.append(f"{ind}    {target} = data[pos:end]; pos = end")

    def read_field(self, f: FieldSpec, out: list[str], ind: str, target: str) -> None:
        if not f.is_array:
            self.read_value(f, False, out, ind, target)
            return
        v = self.version
        compact = self.flex if f.flex is None else v in f.flex
        self.read_len(out, ind, "n", compact, True)
        out.append(f"{ind}if n < 0:")
        out.append(f"{ind}    if {v in f.nullable} and n == -1: {target} = None")
        out.append(f"{ind}    else: raise DecodeError('invalid array length %d' % n)")
        out.append(f"{ind}elif n > len(data) - pos: raise Truncated('{f.name}')")
        typ = f.element_type
        if typ in _FIXED:
            size = struct.calcsize(">" + _FIXED[typ])
            out.append(f"{ind}else:")
            out.append(f"{ind}    {target} = list(struct.unpack_from('>%d{_FIXED[typ]}' % n, data, pos)); "
                       f"pos += n * {size}")
            return
        out.append(f"{ind}else:")
        out.append(f"{ind}    {target} = a = []")
        out.append(f"{ind}    for _ in range(n):")
        self.read_value(f, True, out, ind + "        ", "x")
        out.append(f"{ind}        a.append(x)")

    def struct_decoder(self, fields: list[FieldSpec]) -> str:
        v = self.version
        fn = self.name("d")
        out = [f"def {fn}(data, pos):"]
        plain = [f for f in fields if v in f.versions and not (self.flex and v in f.tagged)]
        tagged = sorted((f for f in fields if v in f.versions and self.flex and v in f.tagged), key=lambda f: f.tag)
        absent = [f for f in fields if v not in f.versions]
        values = {}
        i = 0
        while i < len(plain):  # runs of fixed-width numbers: one unpack
            run = []
            while i < len(plain) and not plain[i].is_array and plain[i].type in _FIXED:
                run.append(plain[i])
                i += 1
            if len(run) > 1:
                fmt = "".join(_FIXED[f.type] for f in run)
                p = self.packer(fmt)
                names = [f"v{len(values) + k}" for k in range(len(run))]
                out.append(f"    {', '.join(names)}, = {p}.unpack_from(data, pos); pos += {struct.calcsize('>' + fmt)}")
                values.update({f.name: n for f, n in zip(run, names)})
            elif run:
                values[run[0].name] = var = f"v{len(values)}"
                self.read_field(run[0], out, "    ", var)
            if i < len(plain) and not (not plain[i].is_array and plain[i].type in _FIXED):
                values[plain[i].name] = var = f"v{len(values)}"
                self.read_field(plain[i], out, "    ", var)
                i += 1
        for f in tagged:
            values[f.name] = var = f"v{len(values)}"
            out.append(f"    {var} = {self.default_expr(f, None)}")
        if self.flex:
            out.append("    if data[pos] == 0: pos += 1")
            out.append("    else:")
            out.append("        count, pos = uv(data, pos)")
            out.append("        for _ in range(count):")
            out.append("            tag, pos = uv(data, pos)")
            out.append("            size, pos = uv(data, pos)")
            out.append("            end = pos + size")
            out.append("            if end > len(data): raise Truncated('tagged field')")
            for f in tagged:
                sub = self.name("t")
                body = [f"def {sub}(data):", "    pos = 0"]
                self.read_field(f, body, "    ", "tv")
                body.append("    return tv")
                self.lines.append("\n".join(body))
                out.append(f"            if tag == {f.tag}: {values[f.name]} = {sub}(data[pos:end])")
            out.append("            pos = end")
        items = [f"{f.name!r}: {values[f.name]}" for f in plain + tagged]
        items += [f"{f.name!r}: {self.default_expr(f, None)}" for f in absent]
        cls = self.const(message_class(self.shape_names(fields)))
        out.append(f"    return {cls}({{{', '.join(items)}}}), pos")
        self.lines.append("\n".join(out))
        return fn

    # -- encoding ----------------------------------------------------------------------------
    def write_len(self, out: list[str], ind: str, expr: str, compact: bool, wide: bool) -> None:
        if compact:  # one byte, from a table, for lengths under 127
            out.append(f"{ind}n = {expr} + 1")
            out.append(f"{ind}w(ONE[n] if n < 0x80 else uvb(n))")
        else:
            out.append(f"{ind}w({'I32' if wide else 'I16'}.pack({expr}))")

    def write_value(self, f: FieldSpec, elem: bool, out: list[str], ind: str, val: str) -> None:
        v = self.version
        compact = self.flex if f.flex is None else v in f.flex
        typ = f.element_type
        if f.is_struct:
            fn = self.struct_encoder(f.fields)
            if v in f.nullable and not elem:
                out.append(f"{ind}if {val} is None: w(b'\\xff')")
                out.append(f"{ind}else: w(b'\\x01'); {fn}({val}, out)")
            else:
                out.append(f"{ind}{fn}({val}, out)")
            return
        if typ in _FIXED:
            out.append(f"{ind}w({self.packer(_FIXED[typ])}.pack({val}))")
            return
        if typ == "uuid":
            out.append(f"{ind}if len({val}) != 16: raise DecodeError('uuid must be 16 bytes')")
            out.append(f"{ind}w({val})")
            return
        nullable = v in f.nullable and not f.is_array
        string = typ == "string"
        null_len = ("b'\\x00'" if compact else ("b'\\xff\\xff'" if string else "b'\\xff\\xff\\xff\\xff'"))
        out.append(f"{ind}if {val} is None:")
        if nullable:
            out.append(f"{ind}    w({null_len})")
        else:
            out.append(f"{ind}    {self.write_empty(compact, not string)}")
        if string:
            out.append(f"{ind}else:")
            out.append(f"{ind}    b = {val}.encode('utf-8')")
            if not compact:
                out.append(f"{ind}    if len(b) > 0x7FFF: raise DecodeError('string longer than 32767 bytes')")
            self.write_len(out, ind + "    ", "len(b)", compact, False)
            out.append(f"{ind}    w(b)")
            return
        self.has_chunks = True
        out.append(f"{ind}elif {val}.__class__ is list or {val}.__class__ is tuple:")
        self.write_len(out, ind + "    ", f"clen({val})", compact, True)
        out.append(f"{ind}    out.extend({val})")
        out.append(f"{ind}else:")
        self.write_len(out, ind + "    ", f"len({val})", compact, True)
        out.append(f"{ind}    w({val})")

    @staticmethod
    def write_empty(compact: bool, wide: bool) -> str:
        if compact:
            return "w(b'\\x01')"
        return "w(b'\\x00\\x00\\x00\\x00')" if wide else "w(b'\\x00\\x00')"

    def write_field(self, f: FieldSpec, out: list[str], ind: str, val: str) -> None:
        if not f.is_array:
            self.write_value(f, False, out, ind, val)
            return
        v = self.version
        compact = self.flex if f.flex is None else v in f.flex
        out.append(f"{ind}if {val} is None:")
        if v in f.nullable:
            out.append(f"{ind}    w({_NULL_ARRAY[compact]})")
        else:
            out.append(f"{ind}    {self.write_empty(compact, True)}")
        out.append(f"{ind}else:")
        self.write_len(out, ind + "    ", f"len({val})", compact, True)
        typ = f.element_type
        if typ in _FIXED:
            one = self.packer(_FIXED[typ])
            out.append(f"{ind}    if len({val}) == 1: w({one}.pack({val}[0]))")
            out.append(f"{ind}    elif {val}: w(struct.pack('>%d{_FIXED[typ]}' % len({val}), *{val}))")
            return
        out.append(f"{ind}    for x in {val}:")
        self.write_value(f, True, out, ind + "        ", "x")

    def struct_encoder(self, fields: list[FieldSpec]) -> str:
        v = self.version
        fn = self.name("e")
        out = [f"def {fn}(o, out):", "    w = out.append", "    get = o.get"]
        plain = [f for f in fields if v in f.versions and not (self.flex and v in f.tagged)]
        tagged = sorted((f for f in fields if v in f.versions and self.flex and v in f.tagged), key=lambda f: f.tag)

        def default(f):
            d = field_default(f, v)
            return repr(d) if not isinstance(d, (dict, list)) else self.const(d)
        i = 0
        while i < len(plain):
            run = []
            while i < len(plain) and not plain[i].is_array and plain[i].type in _FIXED:
                run.append(plain[i])
                i += 1
            if run:
                p = self.packer("".join(_FIXED[f.type] for f in run))
                out.append(f"    w({p}.pack({', '.join(f'get({f.name!r}, {default(f)})' for f in run)}))")
            if i < len(plain):
                f = plain[i]
                out.append(f"    val = get({f.name!r}, {default(f)})")
                self.write_field(f, out, "    ", "val")
                i += 1
        if self.flex and not tagged:
            out.append("    w(b'\\x00')")
        elif self.flex:
            out.append("    entries = []")
            for f in tagged:
                d = self.const(field_default(f, v))
                out.append(f"    val = get({f.name!r}, {d})")
                out.append(f"    if val is not {d} and not is_default(val, {d}):")
                out.append("        outer = out; out = []; w = out.append")
                self.write_field(f, out, "        ", "val")
                out.append(f"        entries.append(({f.tag}, b''.join(out))); out = outer; w = out.append")
            out.append("    w(uvb(len(entries)))")
            out.append("    for tag, data in entries:")
            out.append("        w(uvb(tag)); w(uvb(len(data))); w(data)")
        self.lines.append("\n".join(out))
        return fn

    def build(self, spec: MessageSpec):
        self.flex = self.version in spec.flexible
        dec = self.struct_decoder(spec.fields)
        enc = self.struct_encoder(spec.fields)
        source = "\n\n".join(self.lines) + "\n"
        exec(compile_codec(source, f"<fastcodec {spec.name} v{self.version}>"), self.ns)
        return self.ns[dec], self.ns[enc], source


class FastCodec:
    """Decoder and encoder of one message at one version, generated from its spec."""

    def __init__(self, spec: MessageSpec, version: int):
        gen = _Gen(version)
        self.decode_at, self._encode, self.source = gen.build(spec)
        self.has_chunks = gen.has_chunks

    def decode(self, data, pos: int = 0):
        """(message, position after it). Raises on bytes that do not parse (any exception: the
        caller re-decodes with the reference codec for its error)."""
        return self.decode_at(data, pos)

    def encode(self, obj) -> bytes:
        out: list = []
        self._encode(obj, out)
        return b"".join(out)

    def encode_parts(self, obj) -> list:
        """The pieces whose concatenation is the message (records chunks as given)."""
        out: list = []
        self._encode(obj, out)
        return out


def coalesce(parts: list) -> list:
    """Join runs of small pieces; pieces of at least BIG_CHUNK bytes stay as they are."""
    result = []
    run = []
    for p in parts:
        if len(p) >= BIG_CHUNK:
            if run:
                result.append(b"".join(run))
                run = []
            result.append(p)
        else:
            run.append(p)
    if run:
        result.append(b"".join(run))
    return result
