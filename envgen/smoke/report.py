"""Host-side view of a probe report (schema ``envgen.smoke/1``): typed objects, a verdict, a table.

The probe (``envgen/smoke/probe/``) writes the JSON inside the container; this module reads it back
for ``envgen smoke``, for the record kept against the image ID, and for the report a pushed image
carries. A report that cannot be read raises ``SmokeFailed``: a probe that produced no valid
report has not proved anything.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from envgen.errors import SmokeFailed
from envgen.paths import probe_package_dir
from envgen.vocabulary import TIERS

NOTHING_VALIDATED = "nothing-validated"  # the check a probe run that tried nothing adds (envgen_probe.NOTHING)

SCHEMA = "envgen.smoke/1"
Status = Literal["pass", "fail", "skipped"]
STATUSES: tuple[str, ...] = ("pass", "fail", "skipped")
MODES: tuple[str, ...] = ("gpu", "cpu-only", "libraries")
# what a passing report proves: envgen.vocabulary.TIERS (the library tier only, both tiers on a GPU, a CPU-only profile)
Mode = Literal["gpu", "cpu-only", "libraries"]


@dataclass(frozen=True)
class Diagnosis:
    id: str
    cause: str
    fix: str
    pattern: str = ""
    matched: str = ""


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: Status
    message: str
    framework: str | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    diagnosis: Diagnosis | None = None
    duration_s: float = 0.0


@dataclass(frozen=True)
class SmokeReport:
    status: Literal["pass", "fail"]
    mode: Mode
    checks: tuple[CheckResult, ...]
    duration_s: float
    profile: str | None = None
    driver: str | None = None
    gpus: tuple[dict[str, Any], ...] = ()
    frameworks: dict[str, dict[str, Any]] = field(default_factory=dict)
    python: str | None = None
    tier: str | None = None  # None for a failed report, or one from a probe before the tiers
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> SmokeReport:
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise SmokeFailed(f"the probe's report is not JSON: {exc}",
                              fix="run the probe by hand with --json and read its stderr") from exc
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: object) -> SmokeReport:
        if not isinstance(data, dict):
            raise _malformed("the report is not a JSON object")
        if data.get("schema") != SCHEMA:
            raise _malformed(f"schema is {data.get('schema')!r}, expected {SCHEMA!r}")
        status = _member(data, "status", ("pass", "fail"))
        mode = _member(data, "mode", MODES)
        tier = data.get("tier")
        if tier is not None and tier not in TIERS:
            raise _malformed(f"'tier' is {tier!r}, expected one of {', '.join(TIERS)}")
        raw_checks = data.get("checks")
        if not isinstance(raw_checks, list) or not raw_checks:
            raise _malformed("'checks' is missing or empty")
        checks = tuple(_check(item, index) for index, item in enumerate(raw_checks))
        failed = any(check.status == "fail" for check in checks)
        if failed != (status == "fail"):
            raise _malformed(f"status is {status!r} but {'a' if failed else 'no'} check failed")
        duration = data.get("duration_s", 0.0)
        if not isinstance(duration, (int, float)):
            raise _malformed("'duration_s' is not a number")
        python = data.get("python")
        gpus = data.get("gpus") or []
        frameworks = data.get("frameworks") or {}
        if not isinstance(gpus, list) or not isinstance(frameworks, dict):
            raise _malformed("'gpus' must be a list and 'frameworks' an object")
        return cls(
            status=cast(Literal["pass", "fail"], status),
            mode=cast(Mode, mode),
            checks=checks,
            duration_s=float(duration),
            profile=_optional_str(data.get("profile")),
            driver=_optional_str(data.get("driver")),
            gpus=tuple(gpu for gpu in gpus if isinstance(gpu, dict)),
            frameworks={str(key): value for key, value in frameworks.items() if isinstance(value, dict)},
            python=_optional_str(python.get("version")) if isinstance(python, dict) else None,
            tier=cast("str | None", tier),
            raw=data,
        )

    @property
    def passed(self) -> bool:
        """The verdict: no check failed (skipped checks are not failures; status says why)."""
        return self.status == "pass" and not self.failures

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(check for check in self.checks if check.status == "fail")

    def check(self, name: str) -> CheckResult | None:
        return next((check for check in self.checks if check.name == name), None)

    def counts(self) -> dict[str, int]:
        return {status: sum(1 for check in self.checks if check.status == status) for status in STATUSES}

    def table(self, width: int = 110) -> str:
        """A readable table: one row per check, key figures under it, cause and fix under failures."""
        name_width = max(len(check.name) for check in self.checks)
        gpu_text = ", ".join(f"{g.get('name')} (sm {g.get('compute_capability')})" for g in self.gpus)
        gpu_text = gpu_text or "none"
        tier = f", validated: {self.tier}" if self.tier and self.passed else ""
        if self.check(NOTHING_VALIDATED) is not None:
            tier = ", nothing validated"
        head = (f"smoke {self.status.upper()}{tier}: profile {self.profile or '-'}, {self.mode} mode, "
                f"{self.duration_s:.1f} s; GPUs: {gpu_text}; driver {self.driver or '-'}")
        lines = [head, f"{'check'.ljust(name_width)}  status   message"]
        indent = " " * (name_width + 11)
        for check in self.checks:
            wrapped = textwrap.wrap(check.message, max(width - len(indent), 30)) or [""]
            lines.append(f"{check.name.ljust(name_width)}  {check.status.upper().ljust(7)}  {wrapped[0]}")
            lines.extend(indent + more for more in wrapped[1:])
            figures = _figures_text(check.figures)
            if figures and check.status != "skipped":
                lines.extend(indent + part for part in textwrap.wrap(figures, max(width - len(indent), 30)))
            if check.diagnosis is not None:
                lines.append(f"{indent}cause: {check.diagnosis.cause}")
                lines.append(f"{indent}fix:   {check.diagnosis.fix}")
        counts = self.counts()
        lines.append(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skipped']} skipped")
        return "\n".join(lines)


# What the seal carries of a report (envgen.pipeline.seal): the verdict alone, so that the same build and the same
# verdict seal the same bytes. Left out: times (started, duration_s), the host that ran the probe (host, gpus, driver),
# and what checks measured or printed (message, figures, log: rates, losses, errors that vary from run to run). The
# whole report stays in the validation record of the state directory, where `envgen smoke`/`images` read it.
SEALED_KEYS = ("schema", "probe_version", "profile", "status", "mode", "tier", "tiers_run", "gpu_required", "summary")
SEALED_CHECK_KEYS = ("name", "framework", "status")


def sealed_verdict(raw: dict[str, Any]) -> dict[str, Any]:
    """The report's verdict (SEALED_KEYS; each check's SEALED_CHECK_KEYS, message ""; versions of Python and of the
    frameworks): still a report of this schema (``SmokeReport.from_dict`` reads it), the same for the same verdict."""
    verdict = {key: raw[key] for key in SEALED_KEYS if key in raw}
    verdict["checks"] = [{**{key: check.get(key) for key in SEALED_CHECK_KEYS}, "message": ""}
                         for check in raw.get("checks") or [] if isinstance(check, dict)]
    python = raw.get("python")
    if isinstance(python, dict):
        verdict["python"] = {"version": python.get("version")}
    frameworks = raw.get("frameworks")
    if isinstance(frameworks, dict):
        verdict["frameworks"] = {name: {"version": value.get("version")} for name, value in frameworks.items()
                                 if isinstance(value, dict)}
    return verdict


def load_diagnoses(path: Path | None = None) -> list[dict[str, Any]]:
    """The probe's diagnosis table (``envgen_checks/core/diagnoses.json``), for errors seen on the host side."""
    source = path or probe_package_dir() / "core" / "diagnoses.json"
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
        return list(data["diagnoses"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SmokeFailed(f"cannot read the diagnosis table {source}: {exc}") from exc


def diagnose_text(text: str, diagnoses: list[dict[str, Any]] | None = None) -> Diagnosis | None:
    """Diagnose an error text seen outside the probe (``docker run`` refusing the GPU request, a probe
    that crashed): the same table and the same first-match rule as the probe."""
    table = diagnoses if diagnoses is not None else load_diagnoses()
    for entry in table:
        for pattern in entry["patterns"]:
            found = re.search(pattern, text, re.IGNORECASE | re.MULTILINE)
            if found:
                return Diagnosis(id=entry["id"], cause=_fill(entry["cause"], entry, found),
                                 fix=_fill(entry["fix"], entry, found), pattern=pattern,
                                 matched=" ".join(text[max(0, found.start() - 80):found.end() + 80].split()))
    return None


def _fill(template: str, entry: dict[str, Any], found: re.Match[str]) -> str:
    """``{name}`` from the pattern's named group, else the entry's ``defaults`` (as the probe does)."""
    values = dict(entry.get("defaults") or {})
    values.update((key, value.strip()) for key, value in found.groupdict().items() if value)
    return re.sub(r"\{([a-z_]+)\}", lambda m: str(values.get(m.group(1), m.group(0))), template)


# --- parsing helpers -----------------------------------------------------------------------------

def _malformed(reason: str) -> SmokeFailed:
    return SmokeFailed(f"the probe's report is malformed: {reason}",
                       fix="run the probe by hand with --json and read its stderr")


def _member(data: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = data.get(key)
    if value not in allowed:
        raise _malformed(f"{key!r} is {value!r}, expected one of {', '.join(allowed)}")
    return cast(str, value)


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


def _check(item: object, index: int) -> CheckResult:
    if not isinstance(item, dict):
        raise _malformed(f"check #{index} is not an object")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise _malformed(f"check #{index} has no name")
    status = item.get("status")
    if status not in STATUSES:
        raise _malformed(f"check {name!r} has status {status!r}")
    message = item.get("message")
    if not isinstance(message, str):
        raise _malformed(f"check {name!r} has no message")
    figures = item.get("figures") or {}
    if not isinstance(figures, dict):
        raise _malformed(f"check {name!r}: figures is not an object")
    diagnosis = item.get("diagnosis")
    parsed: Diagnosis | None = None
    if diagnosis is not None:
        if not isinstance(diagnosis, dict) or not all(isinstance(diagnosis.get(k), str)
                                                      for k in ("id", "cause", "fix")):
            raise _malformed(f"check {name!r}: diagnosis needs id, cause and fix")
        parsed = Diagnosis(id=diagnosis["id"], cause=diagnosis["cause"], fix=diagnosis["fix"],
                           pattern=str(diagnosis.get("pattern", "")),
                           matched=str(diagnosis.get("matched", "")))
    duration = item.get("duration_s", 0.0)
    return CheckResult(
        name=name,
        status=cast(Status, status),
        message=message,
        framework=_optional_str(item.get("framework")),
        figures=figures,
        diagnosis=parsed,
        duration_s=float(duration) if isinstance(duration, (int, float)) else 0.0,
    )


def _figures_text(figures: dict[str, Any]) -> str:
    return " ".join(f"{key}={value}" for key, value in figures.items() if not isinstance(value, (list, dict)))
