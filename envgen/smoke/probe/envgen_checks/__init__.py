"""envgen smoke probe's checks, grouped by tier; run through ../envgen_probe.py (its one entry point). Standard library
only, Python 3.7+; its modules import each other relatively, never by a flat name on the path."""
