"""Benchmarks (pytest-benchmark): run with `make bench`. Not part of `make test`."""
