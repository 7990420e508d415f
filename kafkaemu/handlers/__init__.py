"""API handlers, one module per API. Importing this package registers every handler."""
import importlib
import pkgutil

from .registry import REGISTRY


def load_all() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name != "registry" and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


load_all()

__all__ = ["REGISTRY"]
