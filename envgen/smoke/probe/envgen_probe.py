#!/usr/bin/env python3
"""envgen smoke probe, its one entry point: proves that the GPU and the frameworks in this environment really work,
and checks, before an image's command, that this host's GPUs and driver fit the image.

    python -I envgen_probe.py [--expect PROFILE_JSON] [--json] [--out FILE] [--tier T] [--arch-list sm_50,...]
    python -I -S envgen_probe.py preflight PROFILE_JSON [--json]

The checks are the package beside this file, ``envgen_checks``, grouped by tier: ``core`` (shared by both tiers and
the preflight), ``library`` (the library tier: needs no GPU), ``gpu`` (the GPU tier), ``main`` (the probe's run) and
``preflight``. Standard library only at its core, Python 3.7 and later. Run with ``-I`` (as images and envgen run
it), Python puts neither this folder nor the user's site on the path: the folder is put first here.
"""

import os
import sys


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    folder = os.path.dirname(os.path.abspath(__file__))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    if args[:1] == ["preflight"]:
        from envgen_checks import preflight
        return preflight.main(args)  # its argv[0] is the word "preflight", as a script's would be its name
    from envgen_checks import main as probe
    return probe.main(args)


if __name__ == "__main__":
    sys.exit(main())
