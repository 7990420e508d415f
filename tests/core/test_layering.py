"""The layers' shape. The core is pure (no storage, wire, server, handlers, config or control: its
settings are passed in), and its classic, consumer and offsets packages meet only through the shared
modules (context, group_api, timers, ...). The configuration sits below the broker (it imports none of
the layers that read it), and the control plane is a client of the broker: nothing the broker is made
of imports it, and handlers reach the broker only through their context. Type-only imports
(``if TYPE_CHECKING:``) count here: they are dependencies too."""
import pytest

from tests.import_graph import MODULES, PACKAGE, imports

CORE = PACKAGE / "core"
PACKAGES = ("classic", "consumer", "offsets", "transactions")
OUTSIDE_THE_CORE = ("kafkaemu.storage", "kafkaemu.wire", "kafkaemu.server", "kafkaemu.handlers",
                    "kafkaemu.broker", "kafkaemu.testing", "kafkaemu.config", "kafkaemu.control", "kafkaemu.cli")
ABOVE_THE_CONFIG = ("kafkaemu.broker", "kafkaemu.server", "kafkaemu.wire", "kafkaemu.handlers", "kafkaemu.storage",
                    "kafkaemu.control", "kafkaemu.testing", "kafkaemu.cli", "kafkaemu.spark")
BELOW_CONTROL = ("kafkaemu.broker", "kafkaemu.handlers", "kafkaemu.core", "kafkaemu.storage", "kafkaemu.wire",
                 "kafkaemu.protocol", "kafkaemu.auth", "kafkaemu.config", "kafkaemu.tls", "kafkaemu.faults")

CORE_MODULES = sorted(CORE.rglob("*.py"))


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_imports_are_resolved():
    assert "kafkaemu.core.group_api" in imports(CORE / "offsets" / "manager.py")
    assert "kafkaemu.core.classic.group" in imports(CORE / "classic" / "manager.py")


@pytest.mark.parametrize("path", CORE_MODULES, ids=lambda p: str(p.relative_to(CORE)))
def test_the_core_imports_no_storage_wire_server_handlers_config_or_control(path):
    assert not [name for name in imports(path) if under(name, OUTSIDE_THE_CORE)]


@pytest.mark.parametrize("package", PACKAGES)
def test_the_group_packages_do_not_import_each_other(package):
    others = tuple(f"kafkaemu.core.{p}" for p in PACKAGES if p != package)
    for path in (CORE / package).rglob("*.py"):
        assert not [n for n in imports(path) if under(n, others)], path


# Kafka's topic-config table (names, types, ranges): broker settings that are topic defaults are checked by it
CONFIG_MAY_READ = ("kafkaemu.storage.topic_config",)


def test_the_config_imports_none_of_the_layers_that_read_it():
    assert not [name for name in imports(MODULES["kafkaemu.config"])
                if under(name, ABOVE_THE_CONFIG) and not under(name, CONFIG_MAY_READ)]


@pytest.mark.parametrize("module", CONFIG_MAY_READ)
def test_what_the_config_reads_of_storage_imports_nothing_of_kafkaemu(module):
    assert not [name for name in imports(MODULES[module]) if under(name, ("kafkaemu",))]


@pytest.mark.parametrize("module", [m for m in MODULES if under(m, BELOW_CONTROL)])
def test_nothing_the_broker_is_made_of_imports_control(module):
    assert not [name for name in imports(MODULES[module]) if under(name, ("kafkaemu.control",))]


@pytest.mark.parametrize("module", [m for m in MODULES if under(m, ("kafkaemu.handlers",))])
def test_handlers_import_only_the_context_from_the_broker(module):
    """Handlers see the broker through their RequestContext alone (the authorizer plugs in there)."""
    reached = [name for name in imports(MODULES[module])
               if under(name, ("kafkaemu.broker",)) and not under(name, ("kafkaemu.broker.context",))]
    assert not reached, f"{module} imports {reached}; handlers get what they need from the RequestContext"


@pytest.mark.parametrize("module", [m for m in MODULES if under(m, ("kafkaemu.handlers",))])
def test_handlers_move_no_clock(module):
    """Time reaches the core with each request: a handler passes ``ctx.now_ms`` to the core's
    request methods (which fire their due timers first) and never ticks a coordinator itself."""
    assert ".tick(" not in MODULES[module].read_text(), f"{module} moves a clock; pass ctx.now_ms instead"
