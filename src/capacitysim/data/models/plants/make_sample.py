"""Regenerate models/plants/sample-wwtp.csv (seeded; the same seed gives the same file).

Run from the project root:  .venv/bin/python models/plants/make_sample.py
"""

from pathlib import Path

from capacitysim.workflows.spdes import SAMPLE_SEED, write_sample_record

if __name__ == "__main__":
    out = write_sample_record(Path(__file__).resolve().parent / "sample-wwtp.csv", seed=SAMPLE_SEED)
    print(f"wrote {out}")
