"""`envgen doctor --python PATH`: is this venv or conda env right for this host's GPU and driver? Two answers, each
from envgen's own machinery: the probe's library tier run by that interpreter on the host (the frameworks' CUDA
builds and arch lists as they report them, every CUDA library they would load and the file it resolves to), and
`envgen check` of the environment's stack (adopted as `envgen init --from PATH` adopts it) against the host's GPUs
and driver, with the knowledge base's reasons and fixes."""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from envgen.check import HostSpec, check_profile, format_findings
from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.layout import PROBE_ENTRY
from envgen.paths import probe_dir
from envgen.profile import load_profile
from envgen.smoke.report import SmokeReport
from envgen.suggest.adopt.compose import AdoptOptions, adopt
from envgen.suggest.adopt.local import interpreter, read_python

PROBE_TIMEOUT_S = 300


@dataclass(frozen=True)
class PythonDoctor:
    python: Path
    host: str  # the GPUs and driver judged against
    probe: SmokeReport
    findings: str
    errors: int

    def text(self) -> str:
        return (f"environment: {self.python}\nhost: {self.host}\n\nwhat it loads (the probe's library tier, run by "
                f"{self.python}):\n{self.probe.table()}\n\nits stack against this host (envgen check):\n"
                f"{self.findings}\n")

    @property
    def ok(self) -> bool:
        return self.probe.passed and self.errors == 0


def _probe(python: Path, targets: list[dict[str, str]]) -> SmokeReport:
    """The library tier run by ``python``, its kernels judged for ``targets`` (this host's GPUs: the probe skipped
    that check with "no GPU targets" on a host whose GPU the doctor names); nothing else is expected of it."""
    with tempfile.TemporaryDirectory(prefix="envgen-doctor-") as tmp:
        out, expect = Path(tmp) / "report.json", Path(tmp) / "expect.json"
        expect.write_text(json.dumps({"expected": {"gpu_required": None, "gpu_targets": targets}}), encoding="utf-8")
        try:
            subprocess.run([str(python), str(probe_dir() / PROBE_ENTRY), "--tier", "libraries", "--out",
                            str(out), *(["--expect", str(expect)] if targets else [])],
                           capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InputError(f"{python}: the probe did not run ({exc})", fix="give a Python 3.7+ interpreter") from None
        if not out.is_file():
            raise InputError(f"{python}: the probe wrote no report", fix="give a Python 3.7+ interpreter")
        return SmokeReport.from_json(out.read_bytes())


def doctor_python(path: Path, kb: KnowledgeBase, gpus: tuple[str, ...], driver: str | None) -> PythonDoctor:
    python = interpreter(path)
    models = [(name, kb.gpu(name)) for name in gpus]
    report = _probe(python, [{"name": name, "compute_capability": model.compute_capability}
                             for name, model in models if model is not None])
    adopted = adopt(read_python(path), str(path), kb, AdoptOptions(name="environment", gpus=gpus, driver=driver))
    with tempfile.TemporaryDirectory(prefix="envgen-doctor-") as tmp:
        profile_path = Path(tmp) / "environment.yaml"
        profile_path.write_text(adopted.text, encoding="utf-8")
        profile = load_profile(str(profile_path))
    findings = [f for f in check_profile(profile, kb, HostSpec(gpus=list(gpus), driver=driver))
                if not f.code.startswith(("lock-", "base-"))]  # the environment exists: no lock, no base to judge
    host = f"GPUs {', '.join(gpus)}" if gpus else "no GPU read"
    return PythonDoctor(python, f"{host}; driver {driver or 'unknown'}", report, format_findings(findings),
                        sum(f.severity == "error" for f in findings))
