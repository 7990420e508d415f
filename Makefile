# kafkaemu: every target creates the virtual environment and installs what it needs itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 9092

.PHONY: run test unit integration java-deps bench clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,spark]"
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/kafkaemu serve --host $(HOST) --port $(PORT)

java-deps: $(STAMP)
	-$(PY) integration/java/fetch_jars.py

test: $(STAMP) java-deps
	$(PY) -m pytest -q tests integration

unit: $(STAMP)
	$(PY) -m pytest -q tests

integration: $(STAMP) java-deps
	$(PY) -m pytest -q integration

bench: $(STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .cache integration/java/lib integration/java/classes
