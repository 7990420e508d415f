"""Protobuf schemas: ``.proto`` text (protobuf_text) or a base64 ``FileDescriptorProto`` (what
confluent-kafka's ProtobufSerializer sends), linked by protobuf's own DescriptorPool with the
references and the well-known types; the canonical text is the .proto text printed back; the
``serialized`` format is the base64 descriptor (what its ProtobufDeserializer asks for).
Compatibility is Confluent's protobuf ``diff`` package (SchemaDiff, MessageSchemaDiff,
FieldSchemaDiff, EnumSchemaDiff), ported here over descriptors: no library provides it."""
from __future__ import annotations

import base64
import binascii
import re

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError

from . import protobuf_text
from .errors import InvalidSchema

F = descriptor_pb2.FieldDescriptorProto
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")
MAIN_FILE = "__kafkaemu_main__.proto"

COMPATIBLE = frozenset({"MESSAGE_ADDED", "MESSAGE_MOVED", "ENUM_ADDED", "ENUM_REMOVED", "ENUM_CONST_ADDED",
                        "ENUM_CONST_CHANGED", "ENUM_CONST_REMOVED", "FIELD_ADDED", "FIELD_REMOVED",
                        "FIELD_NAME_CHANGED", "FIELD_STRING_OR_BYTES_LABEL_CHANGED", "ONEOF_ADDED", "ONEOF_REMOVED",
                        "ONEOF_FIELD_ADDED", "ONEOF_FIELD_MOVED_TO_TOP_LEVEL"})
_SCALAR_KIND = {F.TYPE_INT32: "GENERAL_NUMBER", F.TYPE_INT64: "GENERAL_NUMBER", F.TYPE_UINT32: "GENERAL_NUMBER",
                F.TYPE_UINT64: "GENERAL_NUMBER", F.TYPE_BOOL: "GENERAL_NUMBER", F.TYPE_ENUM: "GENERAL_NUMBER",
                F.TYPE_SINT32: "SIGNED_NUMBER", F.TYPE_SINT64: "SIGNED_NUMBER", F.TYPE_STRING: "STRING_OR_BYTES",
                F.TYPE_BYTES: "STRING_OR_BYTES", F.TYPE_FIXED32: "FIXED32", F.TYPE_SFIXED32: "FIXED32",
                F.TYPE_FIXED64: "FIXED64", F.TYPE_SFIXED64: "FIXED64", F.TYPE_FLOAT: "FLOAT",
                F.TYPE_DOUBLE: "DOUBLE"}


def _well_known(name: str):
    """A google/protobuf/*.proto file from protobuf's own generated modules, or None."""
    if not name.startswith("google/protobuf/"):
        return None
    import importlib
    try:
        module = importlib.import_module("google.protobuf." + name[len("google/protobuf/"):-len(".proto")] + "_pb2")
    except ImportError:
        return None
    fdp = descriptor_pb2.FileDescriptorProto()
    module.DESCRIPTOR.CopyToProto(fdp)
    return fdp


def _descriptor(text: str, name: str) -> descriptor_pb2.FileDescriptorProto:
    if _BASE64.fullmatch(text):
        try:
            fdp = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text, validate=False))
        except (binascii.Error, DecodeError, ValueError) as exc:
            raise InvalidSchema(f"Invalid schema: not a base64 FileDescriptorProto: {exc}") from exc
        fdp.name = name
        return fdp
    try:
        return protobuf_text.parse_text(text, name)
    except Exception as exc:   # the parser's own errors: any of its exceptions means not a .proto
        raise InvalidSchema(f"Invalid schema: {str(exc)[:300] or type(exc).__name__}") from exc


class ProtobufSchema:
    schema_type = "PROTOBUF"

    def __init__(self, resolved: descriptor_pb2.FileDescriptorProto, pool) -> None:
        self.resolved = resolved
        self.pool = pool

    def canonical(self) -> str:
        return protobuf_text.to_text(self.resolved)

    def normalized(self) -> str:
        return self.canonical()

    def serialized(self) -> str:
        return base64.standard_b64encode(self.resolved.SerializeToString()).decode("ascii")

    def read_errors(self, writer: "ProtobufSchema") -> list[str]:
        found = _Diff(writer, self).run()
        return [f"{{errorType:'{kind}', description:'The new schema has a change of type {kind} at path "
                f"'{path}', which is incompatible'}}" for kind, path in found if kind not in COMPATIBLE]


def parse(text: str, references: list) -> ProtobufSchema:
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(fdp) -> None:
        for dep in fdp.dependency:
            if dep not in added:
                known = _well_known(dep)
                if known is None:
                    raise InvalidSchema(f"Invalid schema: import \"{dep}\" is neither a reference nor a "
                                        f"well-known type")
                add(known)
        try:
            pool.Add(fdp)
        except (TypeError, ValueError, KeyError) as exc:
            raise InvalidSchema(f"Invalid schema: {exc}") from exc
        added.add(fdp.name)

    for name, ref_text in references:
        if name not in added:
            add(_descriptor(ref_text, name))
    main = _descriptor(text, MAIN_FILE)
    add(main)
    resolved = descriptor_pb2.FileDescriptorProto()
    pool.FindFileByName(MAIN_FILE).CopyToProto(resolved)
    resolved.ClearField("name")
    if main.syntax == "proto3":   # CopyToProto keeps it; proto2 files print without it
        resolved.syntax = "proto3"
    return ProtobufSchema(resolved, pool)


class _Diff:
    """Confluent's protobuf SchemaDiff over resolved descriptors: (difference type, path)s."""

    def __init__(self, original: ProtobufSchema, update: ProtobufSchema) -> None:
        self.original, self.update = original, update
        self.found: list[tuple[str, str]] = []
        self._seen: set = set()

    def run(self) -> list[tuple[str, str]]:
        o, u = self.original.resolved, self.update.resolved
        if o.package != u.package:
            self.found.append(("PACKAGE_CHANGED", "#/"))
        self.types(list(o.message_type), list(u.message_type), list(o.enum_type), list(u.enum_type), "#/")
        return self.found

    def types(self, omsgs, umsgs, oenums, uenums, path: str) -> None:
        om = {m.name: (i, m) for i, m in enumerate(x for x in omsgs if not x.options.map_entry)}
        um = {m.name: (i, m) for i, m in enumerate(x for x in umsgs if not x.options.map_entry)}
        for name in sorted(set(om) | set(um)):
            if name not in um:
                self.found.append(("MESSAGE_REMOVED", path + name))
            elif name not in om:
                self.found.append(("MESSAGE_ADDED", path + name))
            else:
                self.message(om[name][1], um[name][1], path + name + "/")
                if om[name][0] != um[name][0]:
                    self.found.append(("MESSAGE_MOVED", path + name))
        oe, ue = {e.name: e for e in oenums}, {e.name: e for e in uenums}
        for name in sorted(set(oe) | set(ue)):
            if name not in ue:
                self.found.append(("ENUM_REMOVED", path + name))
            elif name not in oe:
                self.found.append(("ENUM_ADDED", path + name))
            else:
                a = {v.number: v.name for v in oe[name].value}
                b = {v.number: v.name for v in ue[name].value}
                for number in sorted(set(a) | set(b)):
                    if number not in b:
                        self.found.append(("ENUM_CONST_REMOVED", f"{path}{name}/{number}"))
                    elif number not in a:
                        self.found.append(("ENUM_CONST_ADDED", f"{path}{name}/{number}"))
                    elif a[number] != b[number]:
                        self.found.append(("ENUM_CONST_CHANGED", f"{path}{name}/{number}"))

    @staticmethod
    def _oneofs(message) -> tuple[dict, dict]:
        synthetic = {f.oneof_index for f in message.field if f.HasField("oneof_index") and f.proto3_optional}
        tag_to_oneof = {f.number: message.oneof_decl[f.oneof_index].name for f in message.field
                        if f.HasField("oneof_index") and f.oneof_index not in synthetic}
        names = {message.oneof_decl[i].name for i in range(len(message.oneof_decl)) if i not in synthetic}
        return tag_to_oneof, names

    def message(self, original, update, path: str) -> None:
        key = (id(original), id(update))
        if key in self._seen:
            return
        self._seen.add(key)
        obt, ubt = {f.number: f for f in original.field}, {f.number: f for f in update.field}
        otag, onames = self._oneofs(original)
        utag, unames = self._oneofs(update)
        gone = {n for n in onames - unames if not any(t in ubt for t, o in otag.items() if o == n)}
        for name in sorted(unames):
            origins = set()
            moved_in = 0
            for tag, oneof in utag.items():
                if oneof != name:
                    continue
                if tag in otag:
                    origins.add("oneof:" + otag[tag])
                elif tag in obt:
                    origins.add(f"field:{tag}")
                    moved_in += 1
            if len(origins) > 1:
                self.found.append(("MULTIPLE_FIELDS_MOVED_TO_ONEOF" if moved_in > 1 else
                                   "FIELD_MOVED_TO_EXISTING_ONEOF", path + name))
        for name in sorted(onames | unames):
            if name not in unames:
                self.found.append(("ONEOF_REMOVED", path + name))
            elif name not in onames:
                self.found.append(("ONEOF_ADDED", path + name))
        for tag in sorted(set(obt) | set(ubt)):
            of, uf = obt.get(tag), ubt.get(tag)
            if uf is None:
                if tag in otag:
                    if otag[tag] not in gone:
                        self.found.append(("ONEOF_FIELD_REMOVED", f"{path}{otag[tag]}/{tag}"))
                else:
                    self.found.append(("REQUIRED_FIELD_REMOVED" if of.label == F.LABEL_REQUIRED else
                                       "FIELD_REMOVED", f"{path}{tag}"))
            elif of is None:
                if tag in utag:
                    self.found.append(("ONEOF_FIELD_ADDED", f"{path}{utag[tag]}/{tag}"))
                else:
                    self.found.append(("REQUIRED_FIELD_ADDED" if uf.label == F.LABEL_REQUIRED else
                                       "FIELD_ADDED", f"{path}{tag}"))
            else:
                if tag in otag and tag not in utag:
                    self.found.append(("ONEOF_FIELD_MOVED_TO_TOP_LEVEL", f"{path}{tag}"))
                self.field(of, uf, f"{path}{tag}")
        self.types(list(original.nested_type), list(update.nested_type), list(original.enum_type),
                   list(update.enum_type), path)

    def _lookup(self, schema: ProtobufSchema, type_name: str):
        try:
            return schema.pool.FindMessageTypeByName(type_name.lstrip("."))
        except KeyError:
            return None

    def _kind(self, schema: ProtobufSchema, f) -> str:
        if f.type == F.TYPE_MESSAGE:
            found = self._lookup(schema, f.type_name)
            if found is not None and found.GetOptions().map_entry:
                return "MAP"
            return "MESSAGE"
        return "SCALAR"

    def field(self, of, uf, path: str) -> None:
        if of.name != uf.name:
            self.found.append(("FIELD_NAME_CHANGED", path))
        self.labels_and_types(of, uf, path, labels=True)

    def labels_and_types(self, of, uf, path: str, labels: bool) -> None:
        ok, uk = self._kind(self.original, of), self._kind(self.update, uf)
        if ok != uk:
            self.found.append(("FIELD_KIND_CHANGED", path))
        elif ok == "SCALAR":
            if _SCALAR_KIND[of.type] != _SCALAR_KIND[uf.type]:
                self.found.append(("FIELD_SCALAR_KIND_CHANGED", path))
            elif labels and of.label != uf.label:
                kind = _SCALAR_KIND[of.type]
                if kind == "STRING_OR_BYTES":
                    self.found.append(("FIELD_STRING_OR_BYTES_LABEL_CHANGED", path))
                elif kind != "GENERAL_NUMBER" or of.type != F.TYPE_ENUM:
                    self.found.append(("FIELD_NUMERIC_LABEL_CHANGED", path))
        elif ok == "MAP":
            om = self._lookup(self.original, of.type_name)
            um = self._lookup(self.update, uf.type_name)
            oproto, uproto = descriptor_pb2.DescriptorProto(), descriptor_pb2.DescriptorProto()
            om.CopyToProto(oproto)
            um.CopyToProto(uproto)
            for a, b in zip(oproto.field, uproto.field):
                self.labels_and_types(a, b, path, labels=False)
        else:
            self.message_types(of.type_name, uf.type_name, path)

    def message_types(self, otype: str, utype: str, path: str) -> None:
        om, um = self._lookup(self.original, otype), self._lookup(self.update, utype)
        if om is None or um is None:
            if otype != utype:
                self.found.append(("FIELD_NAMED_TYPE_CHANGED", path))
            return
        local = lambda d: d.full_name[len(d.file.package) + 1:] if d.file.package else d.full_name  # noqa: E731
        if local(om) != local(um):
            self.found.append(("FIELD_NAMED_TYPE_CHANGED", path))
            return
        oproto, uproto = descriptor_pb2.DescriptorProto(), descriptor_pb2.DescriptorProto()
        om.CopyToProto(oproto)
        um.CopyToProto(uproto)
        before = len(self.found)
        self.message(oproto, uproto, path + "/")
        if any(kind not in COMPATIBLE for kind, _ in self.found[before:]):
            self.found.append(("FIELD_NAMED_TYPE_CHANGED", path))
