"""capacitysim: defensible sewer capacity demonstrations.

TR-55/SCS hydrology (vectorized numpy), SWMM network runs (pyswmm, swmmio), and the rules of
the Binghamton-Johnson City I/I offset program and NYC DEP (15 RCNY ch. 18 and ch. 31).
"""

__version__ = "0.1.0"
