"""``.proto`` text to and from ``FileDescriptorProto``: parsed with ``proto-schema-parser`` (a
pure-Python .proto parser) and built into a descriptor whose type names stay as written (the
protobuf DescriptorPool resolves them, as protoc does); printed back as .proto text from a
resolved descriptor. Kept: syntax, package, imports, messages (nested), fields with labels, maps,
oneofs, proto3 ``optional``, enums, reserved ranges and names, services, and the standard options
of files, messages, fields, enums and enum values (``java_package``, ``deprecated``, ``packed``,
``json_name``, ...). Custom options (``(my.option) = ...``) are not kept."""
from __future__ import annotations

from google.protobuf import descriptor_pb2
from proto_schema_parser import ast
from proto_schema_parser.parser import Parser

F = descriptor_pb2.FieldDescriptorProto
SCALARS = {"double": F.TYPE_DOUBLE, "float": F.TYPE_FLOAT, "int64": F.TYPE_INT64, "uint64": F.TYPE_UINT64,
           "int32": F.TYPE_INT32, "fixed64": F.TYPE_FIXED64, "fixed32": F.TYPE_FIXED32, "bool": F.TYPE_BOOL,
           "string": F.TYPE_STRING, "bytes": F.TYPE_BYTES, "uint32": F.TYPE_UINT32, "sfixed32": F.TYPE_SFIXED32,
           "sfixed64": F.TYPE_SFIXED64, "sint32": F.TYPE_SINT32, "sint64": F.TYPE_SINT64}
SCALAR_NAMES = {v: k for k, v in SCALARS.items()}
LABELS = {"REPEATED": F.LABEL_REPEATED, "REQUIRED": F.LABEL_REQUIRED, "OPTIONAL": F.LABEL_OPTIONAL}
MAX_FIELD_NUMBER = 536870911


def parse_text(text: str, name: str) -> descriptor_pb2.FileDescriptorProto:
    """Raises ValueError for text that is not a .proto file."""
    tree = Parser().parse(text)
    fdp = descriptor_pb2.FileDescriptorProto(name=name, syntax=tree.syntax or "proto2")
    if fdp.syntax == "proto2":
        fdp.ClearField("syntax")
    for element in tree.file_elements:
        if isinstance(element, ast.Package):
            fdp.package = element.name
        elif isinstance(element, ast.Import):
            if element.public:
                fdp.public_dependency.append(len(fdp.dependency))
            fdp.dependency.append(element.name)
        elif isinstance(element, ast.Message):
            _message(element, fdp.message_type.add(), fdp.syntax == "proto3")
        elif isinstance(element, ast.Enum):
            _enum(element, fdp.enum_type.add())
        elif isinstance(element, ast.Service):
            _service(element, fdp.service.add())
        elif isinstance(element, ast.Option):
            _option(fdp.options, element)
    return fdp


def _option(options, element) -> None:
    """A standard option set on an ``*Options`` message; custom and unknown ones are dropped."""
    field = options.DESCRIPTOR.fields_by_name.get(element.name)
    if field is None:
        return
    value = element.value
    if isinstance(value, ast.Identifier):
        value = value.name
    if field.enum_type is not None and isinstance(value, str):
        found = field.enum_type.values_by_name.get(value)
        if found is None:
            raise ValueError(f"option {element.name}: no value {value}")
        value = found.number
    try:
        setattr(options, element.name, value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"option {element.name}: {exc}") from exc


def _field(element, out, proto3: bool, oneof_index: int | None = None) -> None:
    out.name, out.number = element.name, element.number
    if not 1 <= element.number <= MAX_FIELD_NUMBER:
        raise ValueError(f"field {element.name} has number {element.number}, outside 1..{MAX_FIELD_NUMBER}")
    cardinality = element.cardinality.value if element.cardinality else None
    out.label = LABELS.get(cardinality, F.LABEL_OPTIONAL)
    if proto3 and cardinality == "OPTIONAL":
        out.proto3_optional = True
    if element.type in SCALARS:
        out.type = SCALARS[element.type]
    else:
        out.type_name = element.type
    if oneof_index is not None:
        out.oneof_index = oneof_index
    for option in element.options:
        if option.name == "json_name":
            out.json_name = str(option.value)
        elif option.name == "default":
            value = option.value.name if isinstance(option.value, ast.Identifier) else option.value
            out.default_value = str(value).lower() if isinstance(value, bool) else str(value)
        else:
            _option(out.options, option)


def _message(element: ast.Message, out, proto3: bool) -> None:
    out.name = element.name
    synthetic = []
    for item in element.elements:
        if isinstance(item, ast.Field):
            _field(item, out.field.add(), proto3)
            if out.field[-1].proto3_optional:
                synthetic.append(out.field[-1])
        elif isinstance(item, ast.MapField):
            entry = out.nested_type.add(name="".join(p[:1].upper() + p[1:] for p in item.name.split("_")) + "Entry")
            entry.options.map_entry = True
            for number, (name, kind) in enumerate((("key", item.key_type), ("value", item.value_type)), 1):
                f = entry.field.add(name=name, number=number, label=F.LABEL_OPTIONAL)
                if kind in SCALARS:
                    f.type = SCALARS[kind]
                else:
                    f.type_name = kind
            out.field.add(name=item.name, number=item.number, label=F.LABEL_REPEATED, type_name=entry.name)
        elif isinstance(item, ast.OneOf):
            index = len(out.oneof_decl)
            out.oneof_decl.add(name=item.name)
            for sub in item.elements:
                if isinstance(sub, ast.Field):
                    _field(sub, out.field.add(), proto3, index)
        elif isinstance(item, ast.Message):
            _message(item, out.nested_type.add(), proto3)
        elif isinstance(item, ast.Enum):
            _enum(item, out.enum_type.add())
        elif isinstance(item, ast.Reserved):
            for r in item.ranges:
                low, _, high = str(r).partition(" to ")
                end = MAX_FIELD_NUMBER if high.strip() == "max" else int(high or low)
                out.reserved_range.add(start=int(low), end=end + 1)
            out.reserved_name.extend(item.names)
        elif isinstance(item, ast.Option):
            _option(out.options, item)
    for f in synthetic:   # proto3 optional: a synthetic oneof each, after the real ones (as protoc)
        f.oneof_index = len(out.oneof_decl)
        out.oneof_decl.add(name="_" + f.name)


def _enum(element: ast.Enum, out) -> None:
    out.name = element.name
    for item in element.elements:
        if isinstance(item, ast.EnumValue):
            value = out.value.add(name=item.name, number=item.number)
            for option in item.options:
                _option(value.options, option)
        elif isinstance(item, ast.Option):
            _option(out.options, item)
        elif isinstance(item, ast.EnumReserved):
            for r in item.ranges:
                low, _, high = str(r).partition(" to ")
                out.reserved_range.add(start=int(low), end=int(high or low))
            out.reserved_name.extend(item.names)


def _service(element: ast.Service, out) -> None:
    out.name = element.name
    for item in element.elements:
        if isinstance(item, ast.Method):
            out.method.add(name=item.name, input_type=item.input_type.type, output_type=item.output_type.type,
                           client_streaming=bool(item.input_type.stream),
                           server_streaming=bool(item.output_type.stream))


# -- printing ----------------------------------------------------------------------------------
def _options(options) -> list[str]:
    """``name = value`` of each standard option set, in field number order."""
    found = []
    for field, value in sorted(options.ListFields(), key=lambda fv: fv[0].number):
        if field.name == "map_entry" or field.is_repeated or field.message_type is not None:
            continue
        if field.enum_type is not None:
            text = field.enum_type.values_by_number[value].name
        elif isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str):
            text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        else:
            text = str(value)
        found.append(f"{field.name} = {text}")
    return found


def _field_options(f) -> str:
    found = []
    if f.HasField("default_value"):
        found.append(f'default = {f.default_value if f.type != F.TYPE_STRING else chr(34) + f.default_value + chr(34)}')
    if f.HasField("json_name") and f.json_name != _default_json_name(f.name):
        found.append(f'json_name = "{f.json_name}"')
    found += _options(f.options)
    return f" [{', '.join(found)}]" if found else ""


def _default_json_name(name: str) -> str:
    parts = name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def to_text(fdp: descriptor_pb2.FileDescriptorProto) -> str:
    """A resolved descriptor (type names fully qualified) as .proto text, Confluent's layout."""
    lines = [f'syntax = "{fdp.syntax or "proto2"}";']
    if fdp.package:
        lines.append(f"package {fdp.package};")
    lines.append("")
    if fdp.dependency:
        for i, dep in enumerate(fdp.dependency):
            lines.append(f'import {"public " if i in fdp.public_dependency else ""}"{dep}";')
        lines.append("")
    file_options = _options(fdp.options)
    if file_options:
        lines.extend(f"option {o};" for o in file_options)
        lines.append("")
    prefix = "." + fdp.package + "." if fdp.package else "."
    proto3 = fdp.syntax == "proto3"
    for message in fdp.message_type:
        _print_message(message, lines, "", prefix, proto3)
    for enum in fdp.enum_type:
        _print_enum(enum, lines, "")
    for service in fdp.service:
        lines.append(f"service {service.name} {{")
        for m in service.method:
            lines.append(f"  rpc {m.name}({'stream ' if m.client_streaming else ''}{_type(m.input_type, prefix)}) "
                         f"returns ({'stream ' if m.server_streaming else ''}{_type(m.output_type, prefix)});")
        lines.append("}")
    return "\n".join(lines).rstrip("\n") + "\n"


def _type(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) else name.lstrip(".")


def _field_type(f, prefix: str) -> str:
    return SCALAR_NAMES[f.type] if f.type in SCALAR_NAMES else _type(f.type_name, prefix)


def _print_message(message, lines: list, indent: str, prefix: str, proto3: bool) -> None:
    lines.append(f"{indent}message {message.name} {{")
    inner = indent + "  "
    lines.extend(f"{inner}option {o};" for o in _options(message.options))
    entries = {n.name: n for n in message.nested_type if n.options.map_entry}
    synthetic = {f.oneof_index for f in message.field if f.HasField("oneof_index") and f.proto3_optional}
    real_oneofs = [i for i in range(len(message.oneof_decl)) if i not in synthetic]
    printed_oneofs = set()
    for f in message.field:
        if f.HasField("oneof_index") and f.oneof_index in real_oneofs:
            if f.oneof_index in printed_oneofs:
                continue
            printed_oneofs.add(f.oneof_index)
            lines.append(f"{inner}oneof {message.oneof_decl[f.oneof_index].name} {{")
            for member in message.field:
                if member.HasField("oneof_index") and member.oneof_index == f.oneof_index:
                    lines.append(f"{inner}  {_field_type(member, prefix)} {member.name} = {member.number}"
                                 f"{_field_options(member)};")
            lines.append(f"{inner}}}")
            continue
        entry_name = f.type_name.rsplit(".", 1)[-1]
        if f.label == F.LABEL_REPEATED and f.type == F.TYPE_MESSAGE and entry_name in entries and \
                f.type_name.endswith(f"{message.name}.{entry_name}"):
            key, value = entries[entry_name].field
            lines.append(f"{inner}map<{_field_type(key, prefix)}, {_field_type(value, prefix)}> {f.name} = {f.number}"
                         f"{_field_options(f)};")
            continue
        label = {F.LABEL_REPEATED: "repeated ", F.LABEL_REQUIRED: "required "}.get(f.label, "")
        if not label and (f.proto3_optional or not proto3):
            label = "optional "
        lines.append(f"{inner}{label}{_field_type(f, prefix)} {f.name} = {f.number}{_field_options(f)};")
    for r in message.reserved_range:
        lines.append(f"{inner}reserved {r.start}{'' if r.end == r.start + 1 else f' to {r.end - 1}'};")
    for name in message.reserved_name:
        lines.append(f'{inner}reserved "{name}";')
    for nested in message.nested_type:
        if not nested.options.map_entry:
            _print_message(nested, lines, inner, prefix, proto3)
    for enum in message.enum_type:
        _print_enum(enum, lines, inner)
    lines.append(f"{indent}}}")


def _print_enum(enum, lines: list, indent: str) -> None:
    lines.append(f"{indent}enum {enum.name} {{")
    lines.extend(f"{indent}  option {o};" for o in _options(enum.options))
    for v in enum.value:
        value_options = _options(v.options)
        shown = f" [{', '.join(value_options)}]" if value_options else ""
        lines.append(f"{indent}  {v.name} = {v.number}{shown};")
    for r in enum.reserved_range:
        lines.append(f"{indent}  reserved {r.start}{'' if r.end == r.start else f' to {r.end}'};")
    for name in enum.reserved_name:
        lines.append(f'{indent}  reserved "{name}";')
    lines.append(f"{indent}}}")
