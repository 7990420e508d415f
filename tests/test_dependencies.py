"""setup.cfg requires exactly what kafkaemu imports: every module of kafkaemu/ imports only the
standard library, kafkaemu itself and the runtime dependencies, except the optional parts, whose
imports come from their extra (the registry's schema libraries, pyspark). A test client (kafka,
confluent_kafka, aiokafka) imported by the package would make it a runtime dependency again."""
import ast
import configparser
import functools
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "kafkaemu"
# module paths whose imports may come from an extra, and which extra
OPTIONAL = {"kafkaemu/schema_registry/": "schema-registry", "kafkaemu/spark/": "spark"}
# imported only by the pytest plugin, which pytest itself loads
PYTEST_PLUGIN = {"kafkaemu/testing/pytest_plugin.py": {"pytest", "_pytest"}}


def requirement_names(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("kafkaemu"):
            names.add(re.split(r"[\[<>=!~ ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def setup_cfg():
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    return parser


def imported_top_levels(path: Path) -> set[str]:
    """The top-level modules a file imports, leaving out imports guarded by ``try`` (a module that
    may be absent, such as a checkout's own helper)."""
    tree = ast.parse(path.read_text(), str(path))
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for s in t.body for n in ast.walk(s)}
    names = set()
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return packages_distributions()


def distributions_of(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in _distributions().get(module, [])}


def test_kafkaemu_imports_only_the_standard_library_and_what_setup_cfg_requires():
    cfg = setup_cfg()
    runtime = requirement_names(cfg["options"]["install_requires"])
    extras = {name: requirement_names(cfg["options.extras_require"][name]) for name in OPTIONAL.values()}
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        allowed = set(runtime)
        for prefix, extra in OPTIONAL.items():
            if rel.startswith(prefix):
                allowed |= extras[extra]
        for module in imported_top_levels(path):
            if module in sys.stdlib_module_names or module == "kafkaemu" or module in PYTEST_PLUGIN.get(rel, ()):
                continue
            dists = distributions_of(module)
            if not dists & allowed:
                wrong.append(f"{rel} imports {module} ({', '.join(sorted(dists)) or 'not installed'})")
    assert wrong == []


def test_no_kafka_client_is_a_runtime_dependency():
    runtime = requirement_names(setup_cfg()["options"]["install_requires"])
    assert not runtime & {"kafka-python", "confluent-kafka", "aiokafka", "testcontainers"}
    assert "kafka-python" in requirement_names(setup_cfg()["options.extras_require"]["test"])
