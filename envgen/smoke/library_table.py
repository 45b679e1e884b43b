"""The smoke probe's library table (``probe/envgen_checks/library/libraries.json``), made from the knowledge base.

The probe runs inside images with the standard library only, so it cannot read the KB's YAML; it
ships this JSON instead, for runs that get no ``expected.libraries`` (a probe started directly on a
host). One source: the table is generated from ``cuda_libraries.yaml`` and a unit test keeps the
shipped file equal to what this module makes (``python -m envgen.smoke.library_table > FILE``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from envgen.kb import KnowledgeBase

CUDA_MAJORS = (11, 12, 13)


def library_table(kb: KnowledgeBase) -> dict[str, Any]:
    families: dict[str, Any] = {}
    for row in kb.cuda_libraries:
        if row.keyed_by == "cuda":
            sonames = {str(m): row.soname(str(m)) for m in CUDA_MAJORS if row.soname(str(m))}
            providers = {str(m): row.pip_name(m) for m in CUDA_MAJORS if row.pip_name(m)}
        else:
            sonames = dict(row.sonames)
            wheel = row.pip.format(major="XX") if row.pip else "the distribution that ships it"
            providers = {key: f"{wheel} (the one for the framework's CUDA major)" for key in row.sonames}
        families[row.family] = {
            "key": row.keyed_by, "sonames": sonames, "providers": providers, "wheel_dir": row.pip_dir,
            "wheel_dir_by_major": dict(row.pip_dir_by_major), "version_call": row.version_call,
            "decode": row.decode,
        }
    tf = next((r for r in kb.framework_libraries if r.framework == "tensorflow" and r.provision == "search_path"),
              None)
    return {
        "schema": "envgen.probe-libraries/1",
        "note": "Generated from envgen/kb/data/cuda_libraries.yaml by envgen.smoke.library_table: what the probe's "
                "library tier loads when the profile gives no expected.libraries (a probe run directly on a host).",
        "source": "envgen/kb/data/cuda_libraries.yaml (each row names its source)",
        "families": families,
        "tensorflow": list(tf.families) if tf else [],
    }


def render(kb: KnowledgeBase) -> str:
    return json.dumps(library_table(kb), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # the generator's one load, from the YAML (never a cache): what ships is made from it
    from envgen.kb.loader import load_kb

    sys.stdout.write(render(load_kb()))
