"""Record a machine for the test fixtures: `python -m envgen.host.record DIR [--profile NAME]`.

Writes the raw outputs the real provider sees (the file names `RecordedProvider` reads), then
`doctor.json` (`envgen doctor --json` of this machine). Needs only the standard library for the raw
outputs and the facts; the per-profile verdicts also need envgen's dependencies (PyYAML, pydantic). When
those are missing, doctor.json says so and keeps the facts, and the verdicts can be computed elsewhere from
the recorded files (`RecordedProvider(DIR)`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envgen.host.collect import collect
from envgen.host.facts import CDI_DIRS, RealProvider
from envgen.host.model import Probe


def _write_probe(directory: Path, probe: Probe, name: str, error_name: str) -> None:
    if probe.ok:
        (directory / name).write_text(probe.output or "", encoding="utf-8")
    elif probe.error:
        (directory / error_name).write_text(probe.error + "\n", encoding="utf-8")


def record_raw(directory: Path, provider: RealProvider) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    _write_probe(directory, provider.nvml(), "nvml.json", "nvml-error.txt")
    _write_probe(directory, provider.nvidia_smi_query(), "query-gpu.csv", "nvidia-smi-error.txt")
    _write_probe(directory, provider.nvidia_smi_q(), "nvidia-smi-q.txt", "nvidia-smi-error.txt")
    _write_probe(directory, provider.nvidia_smi_table(), "nvidia-smi.txt", "nvidia-smi-error.txt")
    _write_probe(directory, provider.docker_info(), "docker-info.json", "docker-error.txt")
    builder = provider.builder()
    if builder.ok:
        (directory / "builder.txt").write_text((builder.output or "") + "\n", encoding="utf-8")
    hook = provider.nvidia_hook()
    if hook:
        (directory / "nvidia-hook.txt").write_text(hook + "\n", encoding="utf-8")
    specs = provider.cdi_specs(CDI_DIRS)
    if specs:
        target = directory / "cdi"
        target.mkdir(exist_ok=True)
        for path, text in specs:
            (target / Path(path).name).write_text(text, encoding="utf-8")
        (target / "paths.txt").write_text("".join(f"{Path(p).name} {p}\n" for p, _ in specs), encoding="utf-8")
    proc = Path("/proc/version")
    if proc.is_file():
        (directory / "proc-version.txt").write_text(proc.read_text(encoding="utf-8", errors="replace"))
    if os.environ.get("WSL_DISTRO_NAME"):
        (directory / "env.txt").write_text(f"WSL_DISTRO_NAME={os.environ['WSL_DISTRO_NAME']}\n")


def doctor_json(provider: RealProvider, profile: str | None) -> dict[str, Any]:
    """`envgen doctor --json` for this machine; facts only (and why) without envgen's dependencies."""
    try:
        from envgen.host.doctor import doctor
        from envgen.kb.cache import kb_for
        from envgen.profile import list_profiles, load_profile
    except ImportError as exc:
        facts = collect(provider)
        return {"schema": "envgen.doctor/1", "host": facts.to_json(), "profiles": [],
                "error": f"verdicts not computed here: {exc}"}
    kb = kb_for()  # this entry point's one load: check's cache where it is on
    facts = collect(provider, kb)
    names = [profile] if profile else [source.name for source in list_profiles()]
    return doctor(facts, [load_profile(name, kb=kb) for name in names], kb).to_json()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m envgen.host.record", description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--profile", default=None)
    args = parser.parse_args(argv)
    provider = RealProvider()
    record_raw(args.directory, provider)
    report = doctor_json(provider, args.profile)
    text = json.dumps(report, indent=2, sort_keys=False) + "\n"
    (args.directory / "doctor.json").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
