"""What must be true of every golden file, whatever its bytes (issue #34): a golden catches a change, these catch a
wrong file that a regeneration (UPDATE_GOLDEN=1) would otherwise carry through. Used by
tests/unit/test_golden_invariants.py; the checks return the problems they find (empty: none)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

GOLDEN = Path(__file__).resolve().parent / "golden"

# Text that must never be in a rendered file: key material, credentials in a URL, a value given to a secret-like
# variable, a proxy address, paths of the machine that rendered it.
SECRET_PATTERNS = {
    "PEM block": re.compile(r"-----BEGIN [A-Z ]+-----"),
    "credentials in a URL": re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@\"']+:[^/\s@\"']+@"),
    "a secret-like value": re.compile(r"(?i)\b[A-Z_]*(PASSWORD|PASSWD|TOKEN|API_?KEY|SECRET_KEY)[A-Z_]*\s*[:=]\s*\S"),
    "a proxy address": re.compile(r"(?i)\b(HTTPS?|ALL|NO)_PROXY\s*[:=]\s*\S"),
    "a path of the rendering machine": re.compile(r"/(?:work/wt|home/[^/\s]+|tmp/pytest-of-[^/\s]+)/"),
}
# The build secrets: named only as BuildKit secret mounts (never copied, never a build argument or variable).
BUILD_SECRETS = ("ca_bundle", "pip_conf", "netrc")
SECRET_MOUNT = re.compile(r"--mount=type=secret,id=(\w+)")
EXACT_CONDA = re.compile(r"[A-Za-z0-9_.-]+(==[0-9][0-9A-Za-z.+_-]*|=[0-9][0-9A-Za-z.+_-]*=[A-Za-z0-9._+-]+)")


def files_of(root: Path) -> dict[str, str]:
    """Every file under ``root`` (hidden ones too), by its path relative to it."""
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*"))
            if p.is_file()}


def secrets_in(files: dict[str, str]) -> list[str]:
    found = []
    for rel, text in files.items():
        for number, line in enumerate(text.splitlines(), 1):
            found += [f"{rel}:{number}: {what}: {line.strip()}" for what, pattern in SECRET_PATTERNS.items()
                      if pattern.search(line)]
    return found


def instructions(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped."""
    joined: list[str] = []
    pending = ""
    for line in dockerfile.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):  # comment lines may sit inside a continued instruction too
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
        else:
            joined.append(pending + stripped)
            pending = ""
    return joined + ([pending.strip()] if pending.strip() else [])


def stage_problems(dockerfile: str) -> list[str]:
    """Stages: the base comes from the BASE_IMAGE argument declared before the first FROM, a stage builds only on
    the base or an earlier stage and copies or mounts only from an earlier one, names are unique, the last stage is
    `runtime`, and the image's user (its last USER) is set after the last RUN and is not root."""
    steps = instructions(dockerfile)
    problems = []
    stages: list[str] = []
    first_from = next((i for i, step in enumerate(steps) if step.startswith("FROM ")), None)
    if first_from is None or not any(s.startswith("ARG BASE_IMAGE=") for s in steps[:first_from]):
        problems.append("no `ARG BASE_IMAGE=...` before the first FROM")
    for step in steps:
        if step.startswith("FROM "):
            match = re.fullmatch(r"FROM (\S+) AS (\S+)", step)
            if match is None:
                problems.append(f"unnamed stage: {step}")
                continue
            parent, name = match.groups()
            if parent != "${BASE_IMAGE}" and parent not in stages:
                problems.append(f"stage {name} builds on {parent}, not the base or an earlier stage")
            if name in stages:
                problems.append(f"stage {name} defined twice")
            stages.append(name)
        for source in re.findall(r"(?:--|,)from=([\w.-]+)", step):
            if source not in stages[:-1]:
                problems.append(f"`--from={source}` in stage {stages[-1] if stages else '?'}: not an earlier stage")
    if not stages or stages[-1] != "runtime":
        problems.append(f"the last stage is {stages[-1:] or 'missing'}, not runtime")
    runtime = steps[max(i for i, s in enumerate(steps) if s.startswith("FROM ")):] if stages else []
    users = [i for i, s in enumerate(runtime) if s.startswith("USER ")]
    runs = [i for i, s in enumerate(runtime) if s.startswith("RUN ")]
    if not users:
        problems.append("the runtime stage sets no USER: the image would run as root")
    else:
        user = runtime[users[-1]].split()[1]
        if user.split(":")[0] in ("0", "root"):
            problems.append(f"the image runs as {user}")
        if runs and runs[-1] > users[-1]:
            problems.append("a RUN after the runtime stage's last USER")
    return problems


def build_secret_problems(dockerfile: str, buildkit: bool) -> list[str]:
    """The proxy CA and pip.conf reach a build as BuildKit secret mounts only: named in no COPY, ADD, ARG or ENV
    (the classic variant names them nowhere); proxy build arguments carry no default value."""
    problems = []
    for step in instructions(dockerfile):
        keyword = step.split()[0]
        mounted = set(SECRET_MOUNT.findall(step))
        for secret in BUILD_SECRETS:
            if secret in step and (keyword != "RUN" or secret not in mounted or not buildkit):
                problems.append(f"{secret} outside a secret mount: {step[:120]}")
        if keyword == "ARG" and re.match(r"ARG (?i:(HTTPS?|ALL|NO)_PROXY)=", step):
            problems.append(f"a proxy argument with a default: {step}")
        if keyword in ("COPY", "ADD") and re.search(r"\.(pem|crt|key)\b|pip\.conf|\.netrc|ca-certificates", step):
            problems.append(f"a certificate or credential file copied into the image: {step}")
    return problems


def _checked_by_script(dockerfile: str, name: str) -> bool:
    """The Dockerfile hands the URL and its sha256 to one of envgen's build scripts that checks it (micromamba.sh runs
    `sha256sum -c` before it installs the binary)."""
    from envgen.paths import build_scripts_dir

    for call in re.finditer(rf'sh \S+/(\w[\w-]*\.sh) "\${name}_URL" "\${name}_SHA256"', dockerfile):
        script = build_scripts_dir() / call.group(1)
        if script.is_file() and "sha256sum -c" in script.read_text(encoding="utf-8"):
            return True
    return False


def _per_platform_uv(step: str) -> bool:
    """fetch-uv.py given the TARGETARCH's wheel (a lock per platform): each case names a wheel URL and its sha256."""
    cases = re.findall(r'\w+\) wheel="(\S*)" sha256=(\S*) ;;', step)
    return (bool(cases) and 'fetch-uv.py "$wheel" "$sha256" ' in step
            and all(url.startswith("https://") and re.fullmatch(r"[0-9a-f]{64}", digest) for url, digest in cases))


def download_problems(dockerfile: str) -> list[str]:
    """A file fetched by URL is checked against a sha256: every `ARG X_URL=` has its `ARG X_SHA256=<64 hex>` and the
    file runs `sha256sum -c`; every wheel URL handed to fetch-uv.py is followed by its 64-hex sha256."""
    steps = instructions(dockerfile)
    problems = [f"fetch-uv.py without a sha256: {step[:160]}" for step in steps
                if "fetch-uv.py " in step and not re.search(r'fetch-uv\.py "https://\S+" [0-9a-f]{64} ', step)
                and not _per_platform_uv(step)]
    for step in steps:
        match = re.fullmatch(r"ARG (\w+)_URL=(\S+)", step)
        if match is None:
            continue
        digest = next((s for s in steps if s.startswith(f"ARG {match.group(1)}_SHA256=")), None)
        if digest is None or not re.fullmatch(rf"ARG {match.group(1)}_SHA256=[0-9a-f]{{64}}", digest):
            problems.append(f"{match.group(1)}_URL has no sha256 build argument")
        elif "sha256sum -c" not in dockerfile and not _checked_by_script(dockerfile, match.group(1)):
            problems.append(f"{match.group(1)}_URL is never checked (no sha256sum -c)")
    return problems


def pin_problems(files: dict[str, str], wanted: Iterable[str]) -> list[str]:
    """The pins present: every line of requirements.lock is `name==version` (a locked one with well-formed sha256
    hashes), every conda dependency of environment.yml an exact pin; a line of requirements.extra.txt is exact too
    unless it is one of the profile's own packages.pip lines (``wanted``) as written; and each of those is there, in
    one file or the other, at the version it names when it names one with ``==``."""
    problems = [f"requirements.lock: {p}" for line in _requirement_lines(files.get("requirements.lock", ""))
                for p in _pin_problem(line)]
    wanted = list(wanted)
    extra = list(_requirement_lines(files.get("requirements.extra.txt", "")))
    problems += [f"requirements.extra.txt: {p}" for line in extra if line not in wanted for p in _pin_problem(line)]
    environment = files.get("environment.yml")
    if environment is not None:
        problems += _conda_pin_problems(environment)
    present = [Requirement(line.partition(" --hash=")[0]) for line in
               [*_requirement_lines(files.get("requirements.lock", "")), *extra, *_environment_pip(environment)]
               if not line.startswith("-")]
    for line in wanted:
        asked = Requirement(line)
        found = [req for req in present if canonicalize_name(req.name) == canonicalize_name(asked.name)]
        exact = [spec.version for spec in asked.specifier if spec.operator == "=="]
        if not found:
            problems.append(f"packages.pip {line!r} is in no requirement file")
        elif exact and not any(str(req.specifier) == f"=={exact[0]}" for req in found):
            problems.append(f"packages.pip {line!r}: the files pin {[str(req) for req in found]}")
    return problems


def _environment_pip(environment: str | None) -> list[str]:
    import yaml

    if environment is None:
        return []
    deps = yaml.safe_load(environment).get("dependencies") or []
    return [line for dep in deps if isinstance(dep, dict) for line in dep.get("pip") or []]


def _requirement_lines(text: str) -> Iterable[str]:
    return (line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def _pin_problem(line: str) -> list[str]:
    requirement, _, hashes = line.partition(" --hash=")
    if line.startswith("-"):
        return [] if re.fullmatch(r"--(index-url|extra-index-url|find-links|no-index)\b.*", line) else [
            f"unexpected option {line!r}"]
    try:
        specs = list(Requirement(requirement).specifier)
    except InvalidRequirement as exc:
        return [f"{line!r}: {exc}"]
    problems = [] if len(specs) == 1 and specs[0].operator == "==" else [f"{line!r} is not exact-pinned"]
    for digest in hashes.split(" --hash=") if hashes else ():
        if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest.strip()):
            problems.append(f"{line!r}: malformed hash {digest!r}")
    return problems


def _conda_pin_problems(environment: str) -> list[str]:
    import yaml

    problems = []
    for dep in yaml.safe_load(environment).get("dependencies") or []:
        if isinstance(dep, dict):
            for line in dep.get("pip") or []:
                problems += [f"environment.yml pip: {p}" for p in _pin_problem(line)]
        elif not EXACT_CONDA.fullmatch(str(dep)):
            problems.append(f"environment.yml: {dep!r} is not an exact conda pin")
    return problems


def stale_directories(root: Path, expected: set[str], depth: int) -> list[Path]:
    """What lies ``depth`` levels under ``root`` that no golden test writes (``expected``: the directories' paths
    relative to ``root``), and any file at a shallower level."""
    found = [path for path in sorted(root.glob("/".join(["*"] * depth)))
             if path.relative_to(root).as_posix() not in expected]
    for level in range(1, depth):
        found += [p for p in sorted(root.glob("/".join(["*"] * level))) if p.is_file()]
    return found


def remove(paths: Iterable[Path]) -> None:
    """UPDATE_GOLDEN=1: stale golden files and directories go."""
    for path in paths:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
