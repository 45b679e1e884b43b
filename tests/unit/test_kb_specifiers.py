"""envgen.kb.specifiers answers as ``packaging`` does, on every specifier the knowledge base holds."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envgen.kb import load_kb
from envgen.kb.specifiers import contains, exact

VERSIONS = ["0.9", "1.16.0", "1.19.5", "1.20.0", "1.23.5", "1.24.3", "1.26.4", "2.0.0", "2.0.2", "2.1.0", "3.19.6",
            "3.20.3", "4.21.0", "4.21.5", "4.21.12", "4.25.3", "5.0.0", "5.26.1", "8.9.2.26", "8.9.4.25", "12.1.105",
            "2.15.0", "2.15.1", "2.16.0", "3.0.2", "59.5.0", "65.5.0", "0.5.1", "2.10.0", "3.1.0"]


def _specs() -> list[str]:
    kb = load_kb()
    specs = {r.spec for row in kb.framework_requires for r in row.requires}
    specs |= {s.versions for row in kb.package_breaks for s in (row.package, row.other) if s is not None}
    return sorted(specs)


@pytest.mark.parametrize("spec", _specs())
def test_same_answer_as_packaging(spec: str) -> None:
    reference = SpecifierSet(spec, prereleases=True)
    for version in VERSIONS:
        assert contains(spec, version) == (Version(version) in reference), (spec, version)


def test_local_labels_and_exact_pins() -> None:
    assert contains("==2.1.2", "2.1.2+cu121")
    assert contains("~=1.19.2", "1.19.5") and not contains("~=1.19.2", "1.20.0")
    assert contains("==2.15.*", "2.15.1") and not contains("!=2.15.*", "2.15.0")
    assert exact("==8.9.2.26") == "8.9.2.26" and exact(">=1,<2") is None and exact("==2.*") is None


def test_an_exact_pin_of_a_dev_or_post_release_is_that_release_alone() -> None:
    """deepspeed 0.10's requires.txt pins ``triton==2.0.0.dev20221202``: 2.0.0 is not it (packaging agrees)."""
    assert contains("==2.0.0.dev20221202", "2.0.0.dev20221202") and not contains("==2.0.0.dev20221202", "2.0.0")
    assert contains("!=2.0.0.dev20221202", "2.0.0") and not contains("!=2.0.0.dev20221202", "2.0.0.dev20221202")
    assert contains("==0.0.22.post7", "0.0.22.post7") and not contains("==0.0.22.post7", "0.0.22")
    assert contains("==1.0rc1", "1.0.0rc1") and contains("==2.1.2", "2.1.2+cu121")
