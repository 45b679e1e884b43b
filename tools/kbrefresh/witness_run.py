"""Carry out one witness trial (``envgen.kb.pypackages.Trial``): a fresh venv made by uv with the trial's exact
pins, the trial's code run in it; or a file read out of a release's wheel on PyPI by HTTP range requests (the
wheel's sha256 as PyPI lists it). Returns the record ``witnesses.yaml`` keeps: what was installed, the command,
the text seen, the result."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import urllib.parse
import zipfile
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name, parse_wheel_filename

from envgen.kb.pypackages import Trial
from tools.kbrefresh.requires import _get
from tools.kbrefresh.wheel_stream import open_seekable

PYPI_JSON = "https://pypi.org/pypi/{name}/json"
_CP = re.compile(r"^cp(\d)(\d+)$")
_REFUSED = "No solution found when resolving dependencies"


def pypi(name: str) -> dict[str, Any]:
    """PyPI's JSON document of a project (every release and its files)."""
    result: dict[str, Any] = json.loads(_get(PYPI_JSON.format(name=canonicalize_name(name))))
    return result


def pick_wheel(files: list[dict[str, Any]]) -> dict[str, Any]:
    """The wheel to read: the newest CPython manylinux x86_64 one, else a pure-Python one."""
    ranked: list[tuple[tuple[int, int], dict[str, Any]]] = []
    for entry in files:
        if not entry["filename"].endswith(".whl") or entry.get("yanked"):
            continue
        for tag in parse_wheel_filename(entry["filename"])[3]:
            cp = _CP.match(tag.interpreter)
            if cp and "manylinux" in tag.platform and tag.platform.endswith("x86_64"):
                ranked.append(((int(cp.group(1)), int(cp.group(2))), entry))
            elif tag.platform == "any":
                ranked.append(((0, 0), entry))
    if not ranked:
        raise SystemExit(f"{files[0]['filename'] if files else '?'}: no Linux x86_64 or pure-Python wheel")
    return max(ranked, key=lambda item: item[0])[1]


def read_member(pin: str, member: str) -> tuple[dict[str, Any], bytes]:
    """(PyPI's file entry of the wheel read, the member's bytes)."""
    name, version = pin.split("==")
    files = pypi(name)["releases"].get(version) or []
    wheel = pick_wheel(files)
    url = urllib.parse.urljoin(PYPI_JSON.format(name=canonicalize_name(name)), wheel["url"])  # may be relative
    with open_seekable(url, int(wheel["size"])) as handle, zipfile.ZipFile(handle) as archive:
        return wheel, archive.read(member)


def _find(data: bytes, text: str) -> str:
    """Where ``text`` is in the member: the line (a text file) or the byte offset (a binary); empty: absent."""
    needle = text.encode()
    at = data.find(needle)
    if at < 0:
        return ""
    if b"\0" in data[:4096]:
        return f"byte offset {at}: {text}"
    number = data.count(b"\n", 0, at) + 1
    line = data.splitlines()[number - 1].decode("utf-8", "replace").strip()
    return f"line {number}: {line}"


def _seen(text: str, expect: str) -> str:
    """The lines of the output that hold ``expect``, then its last line (where a traceback ends)."""
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    if not kept:
        return "(no output)"
    shown = [line for line in kept if expect and expect in line][:2]
    return "\n".join(dict.fromkeys([*shown, kept[-1]]))


def _read_trial(trial: Trial) -> dict[str, Any]:
    wheel, data = read_member(trial.wheel, trial.member)
    where = _find(data, trial.find)
    shown = trial.result if bool(where) == trial.found else "unexpected"
    return {"wheel": wheel["filename"], "sha256": wheel["digests"]["sha256"], "member": trial.member,
            "command": f"read {trial.member} of {wheel['filename']}, find {trial.find!r}",
            "seen": where or f"{trial.find!r} is not in the member", "result": shown}


def _sh(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=1800, check=False)


def _install(trial: Trial, venv: Path, python: str, uv: str) -> tuple[dict[str, Any], Path | None]:
    """Make the venv and install the pins; (the record so far, the venv's python, or None when refused)."""
    made = _sh([uv, "venv", "-q", "-p", python, str(venv)], venv.parent)
    if made.returncode:
        raise SystemExit(f"uv venv failed: {made.stderr}")
    interpreter = venv / "bin" / "python"
    done = _sh([uv, "pip", "install", "--python", str(interpreter), *trial.install], venv.parent)
    command = f"uv venv -p {python} && uv pip install {' '.join(trial.install)}"
    version = _sh([str(interpreter), "-c", "import platform; print(platform.python_version())"], venv.parent)
    record: dict[str, Any] = {"python": version.stdout.strip(), "command": command}
    if done.returncode:
        return {**record, **_refused(done.stdout + done.stderr, command)}, None
    freeze = _sh([uv, "pip", "freeze", "--python", str(interpreter)], venv.parent)
    return {**record, "installed": freeze.stdout.split()}, interpreter


def _refused(out: str, command: str) -> dict[str, Any]:
    """The resolver's reasons (a refusal for want of a wheel for this Python is no verdict on the pair)."""
    because = [line.strip() for line in out.splitlines() if "depends on" in line or "unsatisfiable" in line]
    if _REFUSED not in out or not any("depends on" in line for line in because) or "no wheels" in out:
        raise SystemExit(f"{command}: failed without a verdict on the pair:\n{out}")
    return {"seen": "\n".join(because), "result": "refused"}


def _resolve_trial(trial: Trial, work: Path, uv: str) -> dict[str, Any]:
    """Resolve only, for a CPython minor on Linux x86_64 (a Python this machine need not have)."""
    (work / "requirements.in").write_text("\n".join(trial.install) + "\n", encoding="utf-8")
    args = [uv, "pip", "compile", "--no-header", "--python-version", trial.python, "--python-platform",
            "x86_64-manylinux_2_28", "requirements.in"]
    done = _sh(args, work)
    command = f"uv pip compile --python-version {trial.python} --python-platform x86_64-manylinux_2_28 " \
              f"({' '.join(trial.install)})"
    record: dict[str, Any] = {"python": f"{trial.python} (resolved only)", "command": command}
    if done.returncode:
        return {**record, **_refused(done.stdout + done.stderr, command)}
    resolved = [line.split()[0] for line in done.stdout.splitlines() if "==" in line and not line.startswith(" ")]
    return {**record, "installed": resolved, "seen": f"resolved {len(resolved)} distributions",
            "result": "installs"}


def _run_trial(trial: Trial, expect: str, work: Path, python: str, uv: str) -> dict[str, Any]:
    venv = work / "venv"
    record, interpreter = _install(trial, venv, python, uv)
    if interpreter is None:
        return record
    if trial.wheel:
        wheel, data = read_member(trial.wheel, trial.member)
        (work / Path(trial.member).name).write_bytes(data)
        record |= {"wheel": wheel["filename"], "sha256": wheel["digests"]["sha256"], "member": trial.member}
    done = _sh([str(interpreter), "-c", trial.run], work)
    record["command"] += f" && python -c {shlex.quote(trial.run)}"
    record |= {"exit": done.returncode, "seen": _seen(done.stdout + done.stderr, expect),
               "result": "works" if done.returncode == 0 else "breaks"}
    return record


def carry_out(trial: Trial, expect: str, work: Path, python: str, uv: str) -> dict[str, Any]:
    """Run or read ``trial`` (``work``: an empty scratch folder, removed afterwards); ``expect``: the text of the
    output worth keeping (the row's error)."""
    work.mkdir(parents=True, exist_ok=True)
    try:
        if trial.find:
            record = _read_trial(trial)
        elif trial.python:
            record = _resolve_trial(trial, work, uv)
        else:
            record = _run_trial(trial, expect, work, python, uv)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"trial": trial.key, **record}
