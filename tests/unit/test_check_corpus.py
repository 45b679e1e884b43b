"""The real-world corpus (corpus/check_cases.yaml): each stack checked as written and, where it names a
framework, once more with its frameworks moved into packages.pip (the requirements.txt way of writing it).
Both ways must give the same verdict: "no findings" has to mean envgen looked."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from envgen.check import HostSpec, check_profile, format_findings
from envgen.errors import ProfileError
from envgen.kb import KnowledgeBase
from envgen.profile import load_profile
from envgen.profile.loader import deep_merge

CORPUS = yaml.safe_load((Path(__file__).parent / "corpus" / "check_cases.yaml").read_text(encoding="utf-8"))
BUILTINS = {"legacy-maxwell", "modern-a100", "ngc-tensorflow", "cpu-smoke", "cpu-minimal"}


def case_data(case: dict[str, Any]) -> dict[str, Any]:
    if "raw" in case:
        return copy.deepcopy(case["raw"])
    base = case["base"]
    if base in BUILTINS:
        data = load_profile(base).model_dump(mode="json", exclude={"extends"})
        data["name"] = "corpus"
    else:
        data = copy.deepcopy(CORPUS["bases"][base])
    return deep_merge(data, copy.deepcopy(case.get("set", {})))


def as_pip(data: dict[str, Any], kb: KnowledgeBase) -> dict[str, Any]:
    """The same stack with every framework named in packages.pip instead of frameworks:."""
    out = copy.deepcopy(data)
    frameworks = out.pop("frameworks", None) or {}
    pins = []
    tf = frameworks.get("tensorflow")
    if tf:
        gpu = (out.get("gpu") or {}).get("required", True)
        package = frameworks.get("tensorflow_package") or kb.tensorflow_package(tf, gpu)
        pins.append(f"{package}=={tf}")
    for key, dist in (("pytorch", "torch"), ("torchvision", "torchvision"), ("torchaudio", "torchaudio")):
        if frameworks.get(key):
            pins.append(f"{dist}=={frameworks[key]}")
    packages = out.setdefault("packages", {})
    packages["pip"] = pins + list(packages.get("pip") or [])
    return out


def names_framework(data: dict[str, Any]) -> bool:
    return any((data.get("frameworks") or {}).get(k) for k in ("tensorflow", "pytorch"))


def params() -> list[Any]:
    out = []
    for case in CORPUS["cases"]:
        forms = case.get("forms", ["as-written", "packages.pip"])
        if not names_framework(case_data(case)):
            forms = ["as-written"]  # nothing to move into packages.pip
        for form in forms:
            out.append(pytest.param(case, form, id=f"{case['id']}[{form}]"))
    return out


def test_corpus_is_large_and_sourced() -> None:
    cases = CORPUS["cases"]
    assert len(cases) >= 60
    assert len({c["id"] for c in cases}) == len(cases)
    sourced = ("http", "profiles/", "README", "tests/fixtures/", "tools/kbrefresh/upstream/")
    assert all(c.get("source", "").startswith(sourced) for c in cases)
    assert sum(1 for c in cases if c["expect"] == "ok") >= 15  # verdicts a careless checker gets wrong


@pytest.mark.parametrize(("case", "form"), params())
def test_case(case: dict[str, Any], form: str, kb: KnowledgeBase, tmp_path: Path) -> None:
    data = case_data(case)
    if form == "packages.pip":
        data = as_pip(data, kb)
    path = tmp_path / "corpus.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    if case["expect"] == "profile-error":
        with pytest.raises(ProfileError) as err:
            load_profile(str(path))
        assert case["says"] in err.value.one_line()
        assert ":" in err.value.one_line().split(" ")[0]  # names file:line
        return
    profile = load_profile(str(path))
    host = HostSpec(**case.get("host", {}))
    findings = check_profile(profile, kb, host)
    shown = format_findings(findings)
    codes = {f.code for f in findings if f.severity in ("error", "warning")}
    if case["expect"] == "ok":
        assert not [f for f in findings if f.severity == "error"], shown
    else:
        assert case["expect"] in codes, shown
    quiet = set(case.get("quiet", [])) & {f.code for f in findings if f.severity in ("error", "warning")}
    assert not quiet, shown
