"""API handlers, one module per API. A handler module is imported (and registers its handler)
when its API is first looked up in ``REGISTRY``; ``index.py`` lists them all, so ApiVersions is
answered without importing any. ``load_all`` imports every one (tests, tools)."""
import importlib

from .registry import REGISTRY


def load_all() -> None:
    import pkgutil
    for module in pkgutil.iter_modules(__path__):
        if module.name not in ("registry", "index") and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


__all__ = ["REGISTRY", "load_all"]
