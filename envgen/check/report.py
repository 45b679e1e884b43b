"""Presenting findings: JSON-ready dicts and a plain-text report (the CLI prints them)."""

from __future__ import annotations

from envgen.check.findings import Finding

_MARK = {"error": "ERROR", "warning": "WARN ", "info": "INFO "}


def findings_to_json(findings: list[Finding]) -> list[dict[str, str]]:
    return [f.to_json() for f in findings]


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def format_findings(findings: list[Finding]) -> str:
    if not findings:
        return "no findings: the profile is consistent with the knowledge base"
    lines = []
    for f in findings:
        about = f"{f.platform}: " if f.platform else ""
        lines.append(f"{_MARK[f.severity]} [{f.code}] {about}{f.message}")
        lines.append(f"      fix: {f.fix}")
        lines.append(f"      source: {f.source}")
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    lines.append(f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info")
    return "\n".join(lines)
