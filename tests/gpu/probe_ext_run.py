"""Run the probe's extension-package checks on this machine without pytest: writes an --expect naming every
extension package installed here (tests/gpu/expect_here.py --extensions), runs the probe (all tiers), prints
each ext.* check and exits 1 when one failed. Needs no network and only the repository.

    python tests/gpu/probe_ext_run.py [OUT_DIR]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBE = HERE.parents[1] / "envgen" / "smoke" / "probe" / "envgen_probe.py"


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="envgen-ext-"))
    out.mkdir(parents=True, exist_ok=True)
    expect, report_path = out / "expect.json", out / "report.json"
    subprocess.run([sys.executable, str(HERE / "expect_here.py"), str(expect), "--extensions"], check=True)
    done = subprocess.run([sys.executable, str(PROBE), "--expect", str(expect), "--json", "--out", str(report_path)],
                          capture_output=True, text=True, timeout=600)
    report = json.loads(report_path.read_text())
    ext = [c for c in report["checks"] if c["name"].startswith("ext.")]
    for check in report["checks"]:
        if check["name"].startswith("ext.") or check["status"] == "fail":
            print(f"{check['name']:<24} {check['status'].upper():<8} {check['message']}")
    print(f"probe exit {done.returncode}; {len(ext)} extension check(s); report {report_path}")
    return 1 if done.returncode or not ext or any(c["status"] == "fail" for c in ext) else 0


if __name__ == "__main__":
    sys.exit(main())
