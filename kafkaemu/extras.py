"""The optional parts of kafkaemu and the extras that install them (setup.cfg's extras_require):
a part started without its extra stops with one line naming the extra to install, not an
ImportError from deep inside the first request that needs it."""
from __future__ import annotations

import importlib.util

# extra -> (what needs it, the modules it installs)
EXTRAS = {
    "schema-registry": ("the schema registry", ("avro", "jsonschema", "google.protobuf", "proto_schema_parser")),
}


class MissingExtra(ImportError):
    pass


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):   # a parent package missing, or a module blocked in sys.modules
        return False


def require(extra: str) -> None:
    """MissingExtra naming ``extra`` when any module it installs cannot be imported."""
    feature, modules = EXTRAS[extra]
    missing = [module for module in modules if not _installed(module)]
    if missing:
        raise MissingExtra(f"{feature} needs the {extra} extra: pip install 'kafkaemu[{extra}]' "
                           f"(missing: {', '.join(missing)})")
