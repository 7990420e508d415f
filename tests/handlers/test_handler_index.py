"""``handlers/index.py`` (what the broker advertises and imports on first use) against the handlers
themselves: every module's registrations, imported one by one in a fresh process."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kafkaemu.handlers.index import HANDLERS
from kafkaemu.handlers.registry import ApiRegistry
from kafkaemu.protocol.api_keys import ApiKey

# every handler module imported into a fresh interpreter: what each registers, and the registry's view
_REGISTERED = """
import importlib, json, pkgutil
import kafkaemu.handlers as handlers
from kafkaemu.handlers.registry import REGISTRY
before = REGISTRY.versions()
refused = []
for module in pkgutil.iter_modules(handlers.__path__):
    if module.name not in ("registry", "index"):
        try:
            importlib.import_module("kafkaemu.handlers." + module.name)
        except ValueError as exc:   # a registration the index does not list as it is
            refused.append(str(exc))
print(json.dumps({"before": before, "refused": refused,
                  "registered": {int(k): [a.name, a.min_version, a.max_version] for k, a in REGISTRY._apis.items()}}))
"""

def test_the_index_lists_exactly_the_handlers_that_register():
    out = json.loads(subprocess.run([sys.executable, "-c", _REGISTERED], capture_output=True, text=True,
                                    check=True).stdout)
    assert out["refused"] == [], "; ".join(out["refused"])
    registered = {int(k): tuple(v) for k, v in out["registered"].items()}
    index = {int(k): v for k, v in HANDLERS.items()}
    missing = {ApiKey(k).name: v for k, v in registered.items() if k not in index}
    stale = {ApiKey(k).name: v for k, v in index.items() if k not in registered}
    assert not missing, f"handlers missing from handlers/index.py: {missing}"
    assert not stale, f"handlers/index.py lists APIs no handler registers: {stale}"
    assert registered == index
    # what was advertised before any handler was imported is what the handlers register
    assert [tuple(v) for v in out["before"]] == sorted((k, lo, hi) for k, (_, lo, hi) in index.items())


def test_a_registration_that_differs_from_the_index_is_refused():
    registry = ApiRegistry({ApiKey.METADATA: ("test_handler_index", 0, 12)}, "tests.handlers")
    with pytest.raises(ValueError, match="index.py says"):
        registry.register(ApiKey.METADATA, 0, 13)(lambda ctx, req: None)
    with pytest.raises(ValueError, match=r"FETCH is not in handlers/index.py: add ApiKey.FETCH: \('test_handler_index', 0, 4\),"):
        registry.register(ApiKey.FETCH, 0, 4)(lambda ctx, req: None)


def test_an_api_is_advertised_before_and_imported_on_its_first_lookup():
    code = ("import sys\nfrom kafkaemu.handlers import REGISTRY\n"
            "assert 'kafkaemu.handlers.produce' not in sys.modules\n"
            "assert REGISTRY.supports(0, 9) and not REGISTRY.supports(0, 99)\n"
            "assert 'kafkaemu.handlers.produce' not in sys.modules\n"
            "api = REGISTRY.get(0)\n"
            "assert 'kafkaemu.handlers.produce' in sys.modules and api.name == 'produce', api\n"
            "assert REGISTRY.get(999) is None\n")
    subprocess.run([sys.executable, "-c", code], check=True)
