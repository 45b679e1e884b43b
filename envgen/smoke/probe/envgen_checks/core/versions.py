"""Version helpers of the envgen probe: parts of a version string, agreement with the profile, cuDNN's
integer versions, the CUDA of a torch local label.

Standard library only; runs on Python 3.7 and later (checked by a unit test with vermin).
"""

import re


def version_parts(text):
    """'2.1.2+cu121' -> [2, 1, 2]; '8.9' -> [8, 9]; None -> []."""
    if text is None:
        return []
    base = str(text).split("+")[0]
    parts = []
    for piece in base.split("."):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group(0)))
    return parts


def version_matches(expected, actual, depth=None):
    """True when ``actual`` agrees with every component ``expected`` names (up to ``depth``).

    A local variant (``+cu121``) in ``expected`` must be present in ``actual`` too."""
    if expected in (None, ""):
        return True
    if actual in (None, ""):
        return False
    want = version_parts(expected)
    have = version_parts(actual)
    if depth is not None:
        want = want[:depth]
    if not want or have[:len(want)] != want:
        return False
    expected_text = str(expected)
    if "+" in expected_text:
        return "+" in str(actual) and str(actual).split("+", 1)[1] == expected_text.split("+", 1)[1]
    return True


def cudnn_text(number):
    """cuDNN's integer version as text: 8902 -> '8.9.2', 7605 -> '7.6.5', 91002 -> '9.10.2'."""
    if number is None:
        return None
    number = int(number)
    if number >= 10000:
        return "%d.%d.%d" % (number // 10000, (number % 10000) // 100, number % 100)
    return "%d.%d.%d" % (number // 1000, (number % 1000) // 100, number % 100)


def cuda_from_variant(version):
    """'2.1.2+cu121' -> '12.1', '1.7.1+cu101' -> '10.1', '+cpu' or none -> None: read only for a profile JSON given
    by hand (``core.common.expectations``); envgen's plan states torch's CUDA (``expected.torch_cuda``)."""
    if not version or "+" not in str(version):
        return None
    found = re.match(r"cu(\d+)(\d)$", str(version).split("+", 1)[1])
    if not found:
        return None
    return "%d.%s" % (int(found.group(1)), found.group(2))


def compare_versions(rows):
    """rows: (what, expected, actual, depth). Returns (mismatches list of text, figures dict)."""
    mismatches = []
    figures = {}
    for what, expected, actual, depth in rows:
        figures[what] = actual
        if expected not in (None, "") and not version_matches(expected, actual, depth):
            mismatches.append("%s %s found, profile expects %s" % (what, actual, expected))
    return mismatches, figures
