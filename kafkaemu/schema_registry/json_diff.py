"""Confluent's JSON Schema compatibility, ported from its ``json/diff`` package (SchemaDiff,
ObjectSchemaDiff, ArraySchemaDiff, CombinedSchemaDiff, ...): the differences between an original
and an updated schema, each of a type Confluent classifies as compatible or not. No library
provides these rules. ``differences(original, update)`` with original = the schema data was written
with and update = the reader, so BACKWARD compares (previous, new) as Confluent's
JsonSchema.isBackwardCompatible does.

Schemas are plain JSON (dicts / booleans); each side's ``$ref`` is followed by its own resolver,
in its own documents. Pairs are memoised as Confluent's Context does (DGS-24489), so a schema whose
``anyOf`` branches share definitions costs the number of distinct pairs, not the number of paths to
them, and a check that would still need more than WORK_BUDGET steps stops with BudgetExceeded.
Kept from Confluent's rules: types, string, number, enum/const, combined (allOf/anyOf/oneOf, the
subschema matching greedy rather than a maximum matching), not, object (properties, required,
additionalProperties, min/maxProperties, dependencies), array (items, tuple items, additionalItems,
min/maxItems, uniqueItems). Not kept: unevaluated*/contains keywords, patternProperties as a
partially open content model."""
from __future__ import annotations

COMPATIBLE = frozenset("""ID_CHANGED DESCRIPTION_CHANGED TITLE_CHANGED DEFAULT_CHANGED SCHEMA_REMOVED TYPE_EXTENDED
MAX_LENGTH_INCREASED MAX_LENGTH_REMOVED MIN_LENGTH_DECREASED MIN_LENGTH_REMOVED PATTERN_REMOVED MAXIMUM_INCREASED
MAXIMUM_REMOVED MINIMUM_DECREASED MINIMUM_REMOVED EXCLUSIVE_MAXIMUM_INCREASED EXCLUSIVE_MAXIMUM_REMOVED
EXCLUSIVE_MINIMUM_DECREASED EXCLUSIVE_MINIMUM_REMOVED MULTIPLE_OF_REDUCED MULTIPLE_OF_REMOVED
REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED REQUIRED_ATTRIBUTE_REMOVED DEPENDENCY_ARRAY_NARROWED DEPENDENCY_ARRAY_REMOVED
DEPENDENCY_SCHEMA_REMOVED MAX_PROPERTIES_INCREASED MAX_PROPERTIES_REMOVED MIN_PROPERTIES_DECREASED
MIN_PROPERTIES_REMOVED ADDITIONAL_PROPERTIES_ADDED ADDITIONAL_PROPERTIES_EXTENDED
PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL MAX_ITEMS_INCREASED MAX_ITEMS_REMOVED MIN_ITEMS_DECREASED MIN_ITEMS_REMOVED
UNIQUE_ITEMS_REMOVED ADDITIONAL_ITEMS_ADDED ADDITIONAL_ITEMS_EXTENDED ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
ITEM_ADDED_TO_CLOSED_CONTENT_MODEL ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL
ENUM_ARRAY_EXTENDED COMBINED_TYPE_EXTENDED PRODUCT_TYPE_NARROWED SUM_TYPE_EXTENDED NOT_TYPE_NARROWED""".split())

_STRING = ("maxLength", "minLength", "pattern")
_NUMBER = ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf")
_OBJECT = ("properties", "required", "additionalProperties", "maxProperties", "minProperties", "dependencies",
           "patternProperties", "propertyNames")
_ARRAY = ("items", "additionalItems", "maxItems", "minItems", "uniqueItems", "contains")
_TYPE_KEYWORDS = {"string": _STRING, "number": _NUMBER, "integer": _NUMBER, "object": _OBJECT, "array": _ARRAY}


WORK_BUDGET = 200_000   # pairs visited plus differences carried, over every pass of one check


class BudgetExceeded(Exception):
    """The check needed more than its work budget: the schemas are too intricate to compare."""


class _Check:
    """What one comparison shares across its branches (Confluent's Context memo): the differences
    of every pair compared, relative to the pair, so a pair reached by many paths is compared once;
    the pairs on the stack (a pair met again there is a ``$ref`` cycle, taken as compatible unless
    a previous pass found it incompatible: ``seed``); and the work spent."""

    def __init__(self, seed: dict, budget: list) -> None:
        self.memo: dict[tuple, tuple] = {}
        self.in_progress: set[tuple] = set()
        self.seed = seed
        self.optimistic = False
        self.budget = budget   # [units left], shared by the passes
        self.expanded: dict[int, tuple] = {}   # id(schema) -> (schema, its _combined form)

    def spend(self, units: int) -> None:
        self.budget[0] -= units
        if self.budget[0] < 0:
            raise BudgetExceeded(f"the compatibility check needs more than {WORK_BUDGET} steps")

    def incompatible(self) -> dict:
        return {key: diffs for key, (_, _, diffs) in self.memo.items()
                if any(kind not in COMPATIBLE for kind, _ in diffs)}


class Context:
    """One branch of a comparison: where it is (the path) and what it found. ``resolve`` follows a
    ``$ref`` of the original schema in the original's documents, ``resolve_update`` one of the
    update in the update's (the two swap under ``not``, which compares in reverse)."""

    def __init__(self, check: _Check, resolve, resolve_update, flipped: bool = False) -> None:
        self.check = check
        self.resolve = resolve
        self.resolve_update = resolve_update
        self.flipped = flipped
        self.found: list[tuple[str, tuple]] = []
        self.path: list[str] = []

    def add(self, kind: str, *path: str) -> None:
        self.found.append((kind, (*self.path, *path)))

    def sub(self, flip: bool = False) -> "Context":
        if flip:
            ctx = Context(self.check, self.resolve_update, self.resolve, not self.flipped)
        else:
            ctx = Context(self.check, self.resolve, self.resolve_update, self.flipped)
        ctx.path = list(self.path)
        return ctx

    def rebased(self, diffs: tuple) -> None:
        self.check.spend(len(diffs))
        prefix = tuple(self.path)
        self.found += [(kind, prefix + path) for kind, path in diffs]

    def compatible(self) -> bool:
        return all(kind in COMPATIBLE for kind, _ in self.found)

    def at(self, *segments) -> "_Scope":
        return _Scope(self.path, segments)


class _Scope:
    """``with ctx.at("properties", name):`` the path below a keyword, for what is added inside."""
    __slots__ = ("path", "segments")

    def __init__(self, path: list, segments: tuple) -> None:
        self.path, self.segments = path, segments

    def __enter__(self) -> None:
        self.path.extend(self.segments)

    def __exit__(self, *exc) -> None:
        del self.path[-len(self.segments):]


def differences(original, update, resolve_original, resolve_update) -> list[tuple[str, str]]:
    """(difference type, path) of every change from ``original`` to ``update``, each schema's
    ``$ref`` followed by its own resolver. As Confluent's SchemaDiff.compare: pairs memoised, and
    passes repeated until the pairs found incompatible stop changing (a cycle assumed compatible in
    one pass is seen with its real differences in the next). Raises BudgetExceeded past WORK_BUDGET."""
    budget = [WORK_BUDGET]
    seed: dict = {}
    while True:
        check = _Check(seed, budget)
        ctx = Context(check, resolve_original, resolve_update)
        compare(ctx, original, update)
        found = check.incompatible()
        if not check.optimistic or found.keys() == seed.keys():
            return [(kind, "/".join(("#",) + path)) for kind, path in ctx.found]
        seed = found


def incompatible(original, update, resolve_original, resolve_update) -> list[tuple[str, str]]:
    return [d for d in differences(original, update, resolve_original, resolve_update) if d[0] not in COMPATIBLE]


def _kind(schema) -> str:
    """The everit schema class Confluent's diff dispatches on."""
    if schema is True or schema == {}:
        return "empty"
    if schema is False:
        return "false"
    if not isinstance(schema, dict):
        return "empty"
    if any(k in schema for k in ("allOf", "anyOf", "oneOf")) or isinstance(schema.get("type"), list):
        return "combined"
    if "not" in schema:
        return "not"
    if "enum" in schema:
        return "enum"
    if "const" in schema:
        return "const"
    declared = schema.get("type")
    if declared in ("integer", "number"):
        return "number"
    if declared in ("string", "object", "array", "boolean", "null"):
        return declared
    for name, keywords in _TYPE_KEYWORDS.items():
        if any(k in schema for k in keywords):
            return "number" if name == "integer" else name
    return "empty"


def _combined(ctx: Context, schema: dict) -> tuple[str, list]:
    """The criterion and subschemas of a combined schema; a ``type`` list is an anyOf of one schema
    per type, made once per check so that its subschemas are the same objects (memo keys) each time."""
    for criterion in ("allOf", "anyOf", "oneOf"):
        if criterion in schema:
            return criterion, list(schema[criterion])
    kept = ctx.check.expanded.get(id(schema))
    if kept is None:
        rest = {k: v for k, v in schema.items() if k != "type"}
        kept = ctx.check.expanded[id(schema)] = (schema, ("anyOf", [{**rest, "type": t} for t in schema["type"]]))
    return kept[1]


def compare(ctx: Context, original, update) -> None:
    check = ctx.check
    check.spend(1)
    if original is None and update is None:
        return
    if original is None:
        ctx.add("SCHEMA_ADDED")
        return
    if update is None:
        ctx.add("SCHEMA_REMOVED")
        return
    original, update = ctx.resolve(original), ctx.resolve_update(update)
    key = (id(original), id(update), ctx.flipped)
    kept = check.memo.get(key)
    if kept is not None:
        ctx.rebased(kept[2])
        return
    if key in check.in_progress:   # a $ref cycle
        seeded = check.seed.get(key)
        if seeded is None:
            check.optimistic = True   # assumed compatible for now (the greatest fixed point)
        else:
            ctx.rebased(seeded)
        return
    check.in_progress.add(key)
    try:
        pair = Context(check, ctx.resolve, ctx.resolve_update, ctx.flipped)
        _compare_types(pair, original, update)
    finally:
        check.in_progress.discard(key)
    diffs = tuple(pair.found)
    check.memo[key] = (original, update, diffs)   # the schemas kept alive: their ids are the key
    ctx.rebased(diffs)


def _one_compatible(ctx: Context, pairs: list[tuple], choice: str) -> bool:
    """Whether one of the (original, update) ``pairs`` compares compatibly: the first such one's
    differences are taken, and ``choice`` added when there was more than one to choose from."""
    for original, update in pairs:
        subctx = ctx.sub()
        compare(subctx, original, update)
        if subctx.compatible():
            ctx.found += subctx.found
            if len(pairs) > 1:
                ctx.add(choice)
            return True
    return False


def _compare_types(ctx: Context, original, update) -> None:
    ok, uk = _kind(original), _kind(update)
    if ok != "combined" and uk == "combined":
        criterion, subs = _combined(ctx, update)
        if (len(subs) == 1 or criterion in ("anyOf", "oneOf")) and \
                _one_compatible(ctx, [(original, sub) for sub in subs], "SUM_TYPE_EXTENDED"):
            return
    elif ok == "combined" and uk != "combined":
        criterion, subs = _combined(ctx, original)
        if (len(subs) == 1 or criterion == "allOf") and \
                _one_compatible(ctx, [(sub, update) for sub in subs], "PRODUCT_TYPE_NARROWED"):
            return
    if ok != uk:
        if ok == "false" or uk == "empty":
            return
        ctx.add("TYPE_CHANGED")
        return
    if not isinstance(original, dict) or not isinstance(update, dict):
        return
    for key, kind in (("$id", "ID_CHANGED"), ("title", "TITLE_CHANGED"), ("description", "DESCRIPTION_CHANGED"),
                      ("default", "DEFAULT_CHANGED")):
        if original.get(key) != update.get(key):
            ctx.add(kind)
    {"string": _string, "number": _number, "enum": _enum, "const": _const, "combined": _combined_diff,
     "not": _not, "object": _object, "array": _array}.get(ok, lambda *a: None)(ctx, original, update)


def _additional(ctx: Context, key: str, original, update, name: str) -> None:
    """additionalProperties / additionalItems (absent: true): closed or opened (REMOVED, ADDED), a
    schema instead of true (NARROWED) or the reverse (EXTENDED), or two schemas compared."""
    with ctx.at(key):
        a, b = original.get(key, True), update.get(key, True)
        if (a is not False) != (b is not False):
            ctx.add(f"{name}_ADDED" if b is not False else f"{name}_REMOVED")
        elif isinstance(a, bool) and isinstance(b, dict):
            ctx.add(f"{name}_NARROWED")
        elif isinstance(b, bool) and isinstance(a, dict):
            ctx.add(f"{name}_EXTENDED")
        elif isinstance(a, dict) and isinstance(b, dict):
            compare(ctx, a, b)


def _bound(ctx: Context, key: str, original, update, name: str) -> None:
    a, b = original.get(key), update.get(key)
    if a == b:
        return
    if a is None:
        ctx.add(f"{name}_ADDED", key)
    elif b is None:
        ctx.add(f"{name}_REMOVED", key)
    elif not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        ctx.add(f"{name}_CHANGED", key)
    elif b > a:
        ctx.add(f"{name}_INCREASED", key)
    else:
        ctx.add(f"{name}_DECREASED", key)


def _string(ctx, original, update) -> None:
    _bound(ctx, "maxLength", original, update, "MAX_LENGTH")
    _bound(ctx, "minLength", original, update, "MIN_LENGTH")
    a, b = original.get("pattern"), update.get("pattern")
    if a != b:
        ctx.add("PATTERN_ADDED" if a is None else "PATTERN_REMOVED" if b is None else "PATTERN_CHANGED", "pattern")


def _number(ctx, original, update) -> None:
    for key, name in (("maximum", "MAXIMUM"), ("minimum", "MINIMUM"), ("exclusiveMaximum", "EXCLUSIVE_MAXIMUM"),
                      ("exclusiveMinimum", "EXCLUSIVE_MINIMUM")):
        _bound(ctx, key, original, update, name)
    a, b = original.get("multipleOf"), update.get("multipleOf")
    if a != b:
        if a is None:
            ctx.add("MULTIPLE_OF_ADDED", "multipleOf")
        elif b is None:
            ctx.add("MULTIPLE_OF_REMOVED", "multipleOf")
        elif a % b == 0:
            ctx.add("MULTIPLE_OF_REDUCED", "multipleOf")
        elif b % a == 0:
            ctx.add("MULTIPLE_OF_EXPANDED", "multipleOf")
        else:
            ctx.add("MULTIPLE_OF_CHANGED", "multipleOf")
    was_int, is_int = original.get("type") == "integer", update.get("type") == "integer"
    if was_int and not is_int:
        ctx.add("TYPE_EXTENDED")
    elif is_int and not was_int:
        ctx.add("TYPE_NARROWED")


def _enum(ctx, original, update) -> None:
    a, b = original["enum"], update["enum"]
    if a != b:
        if all(x in b for x in a):
            ctx.add("ENUM_ARRAY_EXTENDED", "enum")
        elif all(x in a for x in b):
            ctx.add("ENUM_ARRAY_NARROWED", "enum")
        else:
            ctx.add("ENUM_ARRAY_CHANGED", "enum")


def _const(ctx, original, update) -> None:
    if original["const"] != update["const"]:
        ctx.add("CONST_CHANGED", "const")


def _not(ctx, original, update) -> None:
    subctx = ctx.sub(flip=True)
    compare(subctx, update["not"], original["not"])   # reversed: a narrower "not" accepts more
    ctx.add("NOT_TYPE_NARROWED" if subctx.compatible() else "NOT_TYPE_EXTENDED", "not")


def _combined_diff(ctx, original, update) -> None:
    oc, osubs = _combined(ctx, original)
    uc, usubs = _combined(ctx, update)
    if oc != uc:
        if uc == "anyOf" or (len(osubs) == 1 and len(usubs) == 1) or (len(osubs) == 1 and uc == "oneOf") \
                or (len(usubs) == 1 and oc == "allOf"):
            ctx.add("COMBINED_TYPE_EXTENDED")
        else:
            ctx.add("COMBINED_TYPE_CHANGED")
            return
    if len(osubs) < len(usubs):
        ctx.add("PRODUCT_TYPE_EXTENDED" if uc == "allOf" else "SUM_TYPE_EXTENDED")
    elif len(osubs) > len(usubs):
        ctx.add("SUM_TYPE_NARROWED" if oc in ("anyOf", "oneOf") else "PRODUCT_TYPE_NARROWED")
    taken: set[int] = set()
    for index, osub in enumerate(osubs):
        with ctx.at(f"{oc}/{index}"):
            for j, usub in enumerate(usubs):
                if j in taken:
                    continue
                subctx = ctx.sub()
                compare(subctx, osub, usub)
                if subctx.compatible():
                    taken.add(j)
                    ctx.found += subctx.found
                    break
    if len(taken) < min(len(osubs), len(usubs)):
        ctx.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")


def _open(schema: dict) -> bool:
    extra = schema.get("additionalProperties", True)
    return (extra is True or extra == {}) and not schema.get("patternProperties")


def _object(ctx, original, update) -> None:
    oprops, uprops = original.get("properties") or {}, update.get("properties") or {}
    oreq, ureq = set(original.get("required") or []), set(update.get("required") or [])
    for name in oprops:
        if name in uprops:
            if name in oreq and name not in ureq:
                ctx.add("REQUIRED_ATTRIBUTE_REMOVED", "required", name)
            elif name not in oreq and name in ureq:
                has_default = isinstance(uprops[name], dict) and "default" in uprops[name]
                ctx.add("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if has_default else "REQUIRED_ATTRIBUTE_ADDED",
                        "required", name)
    for name in sorted(set(oprops) | set(uprops)):
        with ctx.at("properties", name):
            if name not in uprops:
                if _open(update):
                    ctx.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
                elif oprops[name] is False:
                    ctx.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
                else:
                    ctx.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
            elif name not in oprops:
                schema = uprops[name]
                has_default = isinstance(schema, dict) and "default" in schema
                where = "OPEN" if _open(original) else "UNOPEN"
                if where == "OPEN" and _kind(schema) == "empty":
                    ctx.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
                elif name in ureq:
                    ctx.add(f"REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_{where}_CONTENT_MODEL" if has_default
                            else f"REQUIRED_PROPERTY_ADDED_TO_{where}_CONTENT_MODEL")
                else:
                    ctx.add(f"OPTIONAL_PROPERTY_ADDED_TO_{where}_CONTENT_MODEL")
            else:
                compare(ctx, oprops[name], uprops[name])
    odeps, udeps = original.get("dependencies") or {}, update.get("dependencies") or {}
    for name in sorted(set(odeps) | set(udeps)):
        a, b = odeps.get(name), udeps.get(name)
        array = isinstance(a if a is not None else b, list)
        if b is None:
            ctx.add("DEPENDENCY_ARRAY_REMOVED" if array else "DEPENDENCY_SCHEMA_REMOVED", "dependencies", name)
        elif a is None:
            ctx.add("DEPENDENCY_ARRAY_ADDED" if array else "DEPENDENCY_SCHEMA_ADDED", "dependencies", name)
        elif array and set(a) != set(b):
            ctx.add("DEPENDENCY_ARRAY_EXTENDED" if set(b) >= set(a) else
                    "DEPENDENCY_ARRAY_NARROWED" if set(a) >= set(b) else "DEPENDENCY_ARRAY_CHANGED",
                    "dependencies", name)
        elif not array:
            with ctx.at("dependencies", name):
                compare(ctx, a, b)
    _additional(ctx, "additionalProperties", original, update, "ADDITIONAL_PROPERTIES")
    _bound(ctx, "maxProperties", original, update, "MAX_PROPERTIES")
    _bound(ctx, "minProperties", original, update, "MIN_PROPERTIES")


def _array(ctx, original, update) -> None:
    oitems, uitems = original.get("items"), update.get("items")
    with ctx.at("items"):
        if not isinstance(oitems, list) and not isinstance(uitems, list):
            compare(ctx, oitems, uitems)
    olist = oitems if isinstance(oitems, list) else []
    ulist = uitems if isinstance(uitems, list) else []
    for index in range(max(len(olist), len(ulist))):
        with ctx.at(f"items/{index}"):
            if index < len(olist) and index < len(ulist):
                compare(ctx, olist[index], ulist[index])
            elif index < len(olist):
                if update.get("additionalItems", True) is not False:
                    ctx.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
                else:
                    ctx.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL" if olist[index] is False
                            else "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")
            elif original.get("additionalItems", True) is not False:
                ctx.add("ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL" if _kind(ulist[index]) == "empty"
                        else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL")
            else:
                ctx.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")
    _additional(ctx, "additionalItems", original, update, "ADDITIONAL_ITEMS")
    _bound(ctx, "maxItems", original, update, "MAX_ITEMS")
    _bound(ctx, "minItems", original, update, "MIN_ITEMS")
    if bool(original.get("uniqueItems")) != bool(update.get("uniqueItems")):
        ctx.add("UNIQUE_ITEMS_REMOVED" if original.get("uniqueItems") else "UNIQUE_ITEMS_ADDED", "uniqueItems")
