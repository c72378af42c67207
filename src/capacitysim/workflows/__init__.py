"""Workflows compose the pure layers, the engines and the stores (detention, demonstration, sweep)."""
