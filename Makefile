# Two commands for a newcomer: `make demo` and `make test`. Each creates .venv when missing.
# Contributors' inner loop: `make test-fast` (no SWMM, dask, server, browser or PostgreSQL; about 2 minutes on 2 cores).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast bench bench-compare docs serve clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench,docs,service]'
	touch $(STAMP)

# The main job: the design storm and runoff of a sample sewershed, then a capacity demonstration
# on the bundled 500-node model (a 100,000 gpd connection offset by 250,000 gpd of RDII removal in
# its CSO basin) under the Binghamton 1-yr 24-h storm; the HTML report goes to out/.
DEMO_CAPACITY := --model models/synthetic-500.inp --storm binghamton-1yr-24h \
	--connect MH0020=100000 --remediate basin=MH0012,gpd=250000 \
	--report out/capacity-demonstration.html

demo: $(STAMP)
	$(BIN)/capacitysim demo
	@echo
	mkdir -p out
	$(BIN)/capacitysim capacity $(DEMO_CAPACITY)

# The full suite (what .ci/run calls), hypothesis at its thorough profile (tests/conftest.py).
test: $(STAMP)
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q

# The inner loop: pure, rules, io, bank and the CLI without SWMM (and without the tests marked slow), hypothesis at
# its quick profile, on every core (pytest-xdist): 2.0 min on 2 cores beside other jobs (load 2.5), 3.0 at load 4.
# The tier guard (tests/_tiers) fails a test here that starts SWMM, dask, a server, a browser or PostgreSQL without
# its marker.
FAST := not swmm and not dask and not server and not browser and not postgres and not slow
# plugins no test of this tier uses: 3 s of start-up in each of the three processes (schemathesis, pytest-benchmark)
FAST_PLUGINS := -p no:schemathesis -p no:benchmark
test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=dev CAPACITYSIM_TEST_TIER=fast $(BIN)/python -m pytest -q -n auto -m "$(FAST)" $(FAST_PLUGINS)

# Figures only: `capacitysim bench run` (exit 1 only if a reference case fails) and the pytest-benchmark
# suite; nothing here fails on a wall-clock threshold. Regressions: `make bench-compare`.
bench: $(STAMP)
	$(BIN)/capacitysim bench run
	$(BIN)/python -m pytest benchmarks -q -o python_files='bench_*.py' --benchmark-only --benchmark-columns=min,median,stddev,rounds
	$(BIN)/python benchmarks/bench_hydrology.py

# Against the committed baseline: exit 0 no regression, 1 regression, 4 inconclusive (too noisy), 2 error.
bench-compare: $(STAMP)
	$(BIN)/capacitysim bench compare benchmarks/baseline.json

# The user guide into build/docs/, warnings as errors (offline).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The simulation service on http://127.0.0.1:8000 with a demo data folder (users of every role, a seeded
# bank, a recent plant flow record): prints the tokens, then serves until Ctrl-C.
SERVE_DATA := out/serve-demo
serve: $(STAMP)
	$(BIN)/python -m capacitysim.service.demo $(SERVE_DATA)
	@echo "open http://127.0.0.1:8000/ui and sign in with a token above (API: http://127.0.0.1:8000/processes)"
	$(BIN)/capacitysim serve --data $(SERVE_DATA) --port 8000

clean:
	rm -rf $(VENV) build dist src/*.egg-info
