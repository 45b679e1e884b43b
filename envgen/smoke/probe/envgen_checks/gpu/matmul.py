"""What both frameworks' matmul correctness checks share: each precision's error against the float64 reference,
judged by its tolerance, and the verdict. Python 3.7+."""

from ..core.common import Fail


def judge_error(figures, bad, label, error, tolerance):
    """Record ``label``'s relative error; a precision over its tolerance joins ``bad``."""
    figures["rel_error_" + label] = float("%.3g" % error)
    if not error < tolerance[label]:
        bad.append("%s %.3g > %.0e" % (label, error, tolerance[label]))


def matmul_verdict(n, device, bad, figures):
    if bad:
        raise Fail("matmul result differs from the reference (relative error %s)" % ", ".join(bad), figures)
    return "%dx%d matmul on %s matches float64 CPU reference" % (n, n, device), figures
