"""Requires-Dist of releases PyPI serves as an sdist only (flash-attn, deepspeed; issue 29): the sdist reader on
made-up archives (PKG-INFO 2.2 static, dynamic, 2.1 with setuptools' requires.txt), the release picker, the recorded
rows, and check intersecting them like a wheel's."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from packaging.requirements import Requirement

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase
from envgen.profile import load_profile
from tools.kbrefresh.requires import requirements
from tools.kbrefresh.sdist_requires import read_requirements, requires_txt_as_metadata, sdists

REQUIRES_TXT = "torch\neinops>=0.6\n\n[dev]\npytest\n\n[:python_version < \"3.9\"]\nimportlib-metadata\n"


def sdist(files: dict[str, str]) -> bytes:
    """A made-up sdist (not a fact): ``files`` under the top directory ``x-1.0/``."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"x-1.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_requires_txt_sections_become_markers() -> None:
    reqs = requirements(requires_txt_as_metadata(REQUIRES_TXT), ["3.8", "3.10"])
    assert reqs == [{"name": "einops", "spec": ">=0.6"}, {"name": "importlib-metadata", "python": ["3.8"]},
                    {"name": "torch"}, {"name": "pytest", "extra": "dev"}]


def test_pkg_info_22_with_static_requires_dist_is_read_as_is() -> None:
    pkg = "Metadata-Version: 2.2\nName: x\nVersion: 1.0\nRequires-Dist: numpy>=1.20\n\nlong description\n"
    metadata, member, kind = read_requirements(sdist({"PKG-INFO": pkg, "x.egg-info/requires.txt": "torch\n"}))
    assert member == "x-1.0/PKG-INFO" and "static" in kind
    assert requirements(metadata, ["3.10"]) == [{"name": "numpy", "spec": ">=1.20"}]


def test_dynamic_or_older_metadata_falls_back_to_setuptools_record() -> None:
    for head in ("Metadata-Version: 2.2\nDynamic: Requires-Dist\n", "Metadata-Version: 2.1\n"):
        pkg = head + "Name: x\nVersion: 1.0\n\nbody Requires-Dist: not-a-field\n"
        metadata, member, _ = read_requirements(sdist({"PKG-INFO": pkg, "x.egg-info/requires.txt": REQUIRES_TXT}))
        assert member == "x-1.0/x.egg-info/requires.txt"
        assert {r["name"] for r in requirements(metadata, ["3.10"])} == {"torch", "einops", "pytest"}


def test_the_picker_takes_final_sdists_of_the_project_only() -> None:
    files = [{"filename": name, "url": name, "hashes": {"sha256": "0"}} for name in (
        "flash_attn-2.8.2.tar.gz", "flash_attn-2.8.3.post1.tar.gz", "flash_attn-2.9.0rc1.tar.gz",
        "flash_attn_3-2.8.3.tar.gz", "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "flash_attn-2.7.0.tar.gz")]
    files.append({"filename": "flash_attn-2.8.4.tar.gz", "yanked": True})
    assert [f["filename"] for f in sdists(files, Requirement("flash-attn>=2.8"))] == [
        "flash_attn-2.8.2.tar.gz", "flash_attn-2.8.3.post1.tar.gz"]


def test_recorded_sdist_rows_name_the_file_read(kb: KnowledgeBase) -> None:
    rows = [r for r in kb.framework_requires if r.sdist]
    assert {r.distribution for r in rows} == {"flash-attn", "deepspeed"} and len(rows) == 124
    for row in rows:
        assert row.source.startswith("https://files.pythonhosted.org/") and "(sdist only: " in row.source
        assert "sha256 " in row.source and " lines " in row.source, row.key
    flash = kb.requires_of("flash-attn", "2.8.3")
    assert flash is not None and [(r.name, r.spec) for r in flash.active("3.11", frozenset())] == [
        ("einops", ""), ("torch", "")]
    deepspeed = kb.requires_of("deepspeed", "0.19.8")
    assert deepspeed is not None and ("torch", ">=2.0.0") in {(r.name, r.spec) for r in deepspeed.requires}
    # the older releases (flash-attn 2.0-2.6.3, deepspeed 0.10-0.15.4) too: deepspeed 0.10.0 still capped pydantic
    old = kb.requires_of("deepspeed", "0.10.0")
    assert old is not None and ("pydantic", "<2.0.0") in {(r.name, r.spec) for r in old.requires}
    assert kb.requires_of("flash-attn", "2.0.4") is not None and kb.requires_of("flash-attn", "2.6.3") is not None


def test_check_intersects_an_sdist_row_like_a_wheels(tmp_path: Path, kb: KnowledgeBase) -> None:
    """deepspeed 0.18.0's requires.txt asks pydantic>=2.0.0: a profile pinning pydantic 1.10.13 beside it is refused."""
    path = tmp_path / "ds.yaml"
    path.write_text("name: ds\nbase: nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04\npython: \"3.10\"\ncuda: \"12.4\"\n"
                    "frameworks: {pytorch: \"2.5.1+cu124\"}\npackages: {pip: [deepspeed==0.18.0, pydantic==1.10.13]}\n")
    found = [f for f in check_profile(load_profile(str(path), kb=kb), kb, HostSpec())
             if f.code == "pkg-requires-conflict"]
    assert found and found[0].severity == "error"
    assert "pydantic>=2.0.0 (its sdist's Requires-Dist)" in found[0].message
