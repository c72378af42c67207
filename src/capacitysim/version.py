"""The version of capacitysim (recorded in every report, benchmark run and result document)."""

__version__ = "0.1.0"
