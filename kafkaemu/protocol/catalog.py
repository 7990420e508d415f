"""The catalogue of every message kafkaemu speaks, loaded once from ``protocol_specs/``."""
from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from functools import lru_cache

from .codegen import Codec
from .spec import MESSAGE_LINE, MessageSpec, parse_spec


def spec_dir() -> str:
    """``KAFKAEMU_PROTOCOL_SPECS`` if set; else the specs an installed kafkaemu carries
    (``kafkaemu/protocol_specs``, package data of the wheel); else a checkout's top-level
    ``protocol_specs/`` (running from source or installed editable). A path string (``os.path``:
    pathlib's import costs a start more than the lookup)."""
    env = os.environ.get("KAFKAEMU_PROTOCOL_SPECS")
    if env:
        return env
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    shipped = os.path.join(package, "protocol_specs")   # package data: a directory beside the modules
    if os.path.isdir(shipped):
        return shipped
    checkout = os.path.join(os.path.dirname(package), "protocol_specs")
    if os.path.isdir(checkout):
        return checkout
    raise FileNotFoundError(f"protocol_specs/ is neither in the package ({shipped}) nor in a checkout "
                            f"({checkout}); set KAFKAEMU_PROTOCOL_SPECS")


class _Specs(Mapping):
    """One kind of message by key (api key, or name for the others): every key is known from
    the spec files' message lines, a file is parsed when one of its messages is first asked."""

    def __init__(self, catalog: "Catalog", kind: str) -> None:
        self._catalog, self._kind = catalog, kind
        self._found: dict = {}

    def __getitem__(self, key) -> MessageSpec:
        spec = self._found.get(key)
        if spec is None:
            self._catalog._parse(self._catalog._source((self._kind, key)))   # KeyError: no such message
            spec = self._found[key]
        return spec

    def __iter__(self):
        return (key for kind, key in self._catalog._every_slot() if kind == self._kind)

    def __len__(self) -> int:
        return sum(1 for kind, _ in self._catalog._every_slot() if kind == self._kind)


class Catalog:
    """Every message of the spec files (``files``: source name -> text, e.g. a ``SpecFiles``, which
    reads a file when its text is first asked). A file's message lines are read when a message is
    first looked for in it, and the file is parsed when one of its messages is first used, so a
    start answers its first requests without reading seventy files: a request or response of API
    key N is looked for first in the file named ``NNN_*.spec`` (the spec directory's convention),
    any other message first in the top-level files without a number (``headers.spec``); a message
    not found there, and listing a table, index every file (which refuses a message declared twice).
    """

    def __init__(self, files: Mapping[str, str]):
        self._files = files
        self._texts: dict[str, str] = {}         # source name -> text: indexed, until parsed
        self._lock = threading.RLock()
        self._where: dict[tuple[str, object], str] = {}
        self._all_indexed = False
        self._parsed: set[str] = set()
        self.requests = _Specs(self, "request")
        self.responses = _Specs(self, "response")
        self.others = _Specs(self, "other")
        self._codecs: dict[tuple[str, int], Codec] = {}

    def _index(self, sources) -> None:
        """Read the message lines of those of ``sources`` not read yet (under the lock)."""
        for source in sources:
            if source in self._texts or source in self._parsed:
                continue
            text = self._texts[source] = self._files[source]
            for m in MESSAGE_LINE.finditer(text):
                kind, key, name = m.group(1), m.group(2), m.group(3)
                slot = (kind, int(key)) if kind in ("request", "response") else ("other", name)
                if slot in self._where:
                    raise ValueError(f"duplicate {kind} {key or name} ({source}, {self._where[slot]})")
                self._where[slot] = source

    def _first_looked_in(self, slot) -> list[str]:
        kind, key = slot
        if kind == "other":
            return [s for s in self._files if os.sep not in s and "/" not in s and not s[:1].isdigit()]
        return [s for s in self._files if s.startswith(f"{key:03d}_")]

    def _source(self, slot) -> str:
        """The file declaring ``slot`` ((kind, api key) or ("other", name)); KeyError if none does."""
        source = self._where.get(slot)
        if source is None:
            with self._lock:
                self._index(self._first_looked_in(slot))
                if slot not in self._where:
                    self._index_all()
                source = self._where[slot]
        return source

    def _index_all(self) -> None:
        with self._lock:
            if not self._all_indexed:
                self._index(self._files)
                self._all_indexed = True

    def _every_slot(self):
        self._index_all()
        return list(self._where)

    def _parse(self, source: str) -> None:
        # under a lock: an in-process emulator's broker thread and a test's thread may ask at once,
        # and a file's text is dropped only once its messages are all in place
        with self._lock:
            text = self._texts.get(source)
            if text is None:
                return
            tables = {"request": self.requests, "response": self.responses}
            for m in parse_spec(text, source):
                table = tables.get(m.kind, self.others)
                table._found[m.api_key if m.kind in tables else m.name] = m
            del self._texts[source]
            self._parsed.add(source)

    def _codec(self, spec: MessageSpec, version: int) -> Codec:
        key = (spec.name, version)
        codec = self._codecs.get(key)
        if codec is None:
            if version not in spec.versions:
                raise KeyError(f"{spec.name} has no version {version}")
            codec = self._codecs[key] = Codec(spec, version)
        return codec

    def request(self, api_key: int, version: int) -> Codec:
        return self._codec(self.requests[api_key], version)

    def response(self, api_key: int, version: int) -> Codec:
        return self._codec(self.responses[api_key], version)

    def data(self, name: str, version: int) -> Codec:
        return self._codec(self.others[name], version)

    def is_flexible_request(self, api_key: int, version: int) -> bool:
        return version in self.requests[api_key].flexible

    def api_name(self, api_key: int) -> str:
        spec = self.requests.get(api_key)
        return spec.name[: -len("Request")] if spec else f"Api{api_key}"


class SpecFiles(Mapping):
    """Every ``*.spec`` file under ``directory``: its path relative to it -> its text, in path order,
    each file read when its text is asked (listed with ``os.walk``: pathlib's ``rglob`` costs a
    start more than the listing)."""

    def __init__(self, directory: str) -> None:
        found = []
        for root, _, names in os.walk(directory):
            rel = os.path.relpath(root, directory)
            found += [(name if rel == "." else os.path.join(rel, name), os.path.join(root, name))
                      for name in names if name.endswith(".spec")]
        self._paths = dict(sorted(found))

    def __getitem__(self, source: str) -> str:
        with open(self._paths[source], encoding="utf-8") as f:
            return f.read()

    def __iter__(self):
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    return Catalog(SpecFiles(spec_dir()))
