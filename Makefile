# Two commands for a newcomer: `make demo` and `make test`. Each creates .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/capacitysim demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m pytest benchmarks -q -o python_files='bench_*.py' --benchmark-only --benchmark-columns=min,median,stddev,rounds
	$(BIN)/python benchmarks/bench_hydrology.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
