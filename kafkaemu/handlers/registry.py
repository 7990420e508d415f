"""Which handler answers which API: handlers register (``ApiKey``, min, max version) with
``@registry.register``; the broker's dispatch looks them up here, and ApiVersions is derived from it,
so an API is advertised exactly when a handler for it exists.

The broker's registry starts from ``index.py``, the static table of every handler's API key,
module and versions: it advertises them without importing a handler, and imports a handler's module
(which registers it) when its API is first looked up. A registration must match its index line."""
from __future__ import annotations

from typing import Callable

from ..broker.context import Handler
from ..protocol.api_keys import ApiKey
from .index import HANDLERS


class ApiHandler:
    __slots__ = ("api_key", "name", "min_version", "max_version", "func")

    def __init__(self, api_key: ApiKey, name: str, min_version: int, max_version: int, func: Handler) -> None:
        self.api_key, self.name, self.func = api_key, name, func
        self.min_version, self.max_version = min_version, max_version

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def __repr__(self) -> str:
        return f"ApiHandler({self.api_key.name}, {self.name}, v{self.min_version}-v{self.max_version})"


class ApiRegistry:
    """``index``: api key -> (module of ``package``, min, max version) of handlers registered on
    first lookup; without one, only what ``register`` is given (tests build such registries)."""

    def __init__(self, index: dict[int, tuple[str, int, int]] | None = None, package: str | None = None) -> None:
        self._apis: dict[int, ApiHandler] = {}   # keyed by plain ints: looked up with the header's key
        self._index = {int(k): v for k, v in (index or {}).items()}
        self._ranges: dict[int, tuple[int, int]] = {k: (lo, hi) for k, (_, lo, hi) in self._index.items()}
        self._package = package
        self._api_keys: list[dict] | None = None

    def register(self, api_key: ApiKey, min_version: int, max_version: int) -> Callable[[Handler], Handler]:
        api_key = ApiKey(api_key)

        def decorate(func: Handler) -> Handler:
            name = func.__module__.rsplit(".", 1)[-1]
            if api_key in self._apis:
                raise ValueError(f"api key {api_key} registered twice ({self._apis[api_key].name}, {func.__name__})")
            if min_version > max_version:
                raise ValueError(f"api key {api_key}: empty version range")
            if self._index and self._index.get(api_key) != (name, min_version, max_version):
                line = f"ApiKey.{api_key.name}: ({name!r}, {min_version}, {max_version}),"
                if api_key not in self._index:
                    raise ValueError(f"{api_key.name} is not in handlers/index.py: add {line}")
                raise ValueError(f"{api_key.name} is registered as {line} but handlers/index.py says "
                                 f"{self._index[api_key]}: make them agree")
            self._api_keys = None
            self._apis[int(api_key)] = ApiHandler(api_key, name, min_version, max_version, func)
            self._ranges[int(api_key)] = (min_version, max_version)
            return func
        return decorate

    def get(self, api_key: int) -> ApiHandler | None:
        api = self._apis.get(api_key)
        if api is None and api_key in self._index:
            return self._load(api_key)
        return api

    def _load(self, api_key: int) -> ApiHandler:
        module = self._index[api_key][0]
        # the import statement's machinery (thread-safe, and seen by ``python -X importtime``)
        __import__(f"{self._package}.{module}")
        api = self._apis.get(api_key)
        if api is None:
            raise LookupError(f"{self._package}.{module} registers no handler for api key {api_key}")
        return api

    def supports(self, api_key: int, version: int) -> bool:
        versions = self._ranges.get(api_key)
        return versions is not None and versions[0] <= version <= versions[1]

    @property
    def count(self) -> int:
        """How many APIs are registered."""
        return len(self._ranges)

    def versions(self) -> list[tuple[int, int, int]]:
        """(api_key, min_version, max_version) for every registered API, sorted by key."""
        return [(ApiKey(k), lo, hi) for k, (lo, hi) in sorted(self._ranges.items())]

    def api_keys(self) -> list[dict]:
        """The ``api_keys`` list of an ApiVersions response (a new list; its entries are shared)."""
        if self._api_keys is None:
            self._api_keys = [{"api_key": k, "min_version": lo, "max_version": hi} for k, lo, hi in self.versions()]
        return list(self._api_keys)


registry = ApiRegistry(HANDLERS, __package__)
REGISTRY = registry
