"""The smoke test: the probe every image carries (``probe/``) and the host-side view of its report."""

from envgen.smoke.report import CheckResult, Diagnosis, SmokeReport, diagnose_text, load_diagnoses

__all__ = ["CheckResult", "Diagnosis", "SmokeReport", "diagnose_text", "load_diagnoses"]
