"""Registry mirrors (mirrors.registries): reference rewriting, and the build argument that carries
it without changing the rendered files or the content hash."""

from __future__ import annotations

import pytest

from envgen.config import UserConfig
from envgen.errors import RegistryError
from envgen.mirrors import mirror_ref, split_registry
from envgen.pipeline.mirrors import mirror_failure
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.profile.model import Mirrors
from envgen.render import render_in_memory

DIGEST = "sha256:" + "b" * 64
HUB = {"docker.io": "mirror.example.org:5000"}


@pytest.mark.parametrize(("ref", "expected"), [
    ("ubuntu:22.04", ("docker.io", "library/ubuntu:22.04")),
    ("library/ubuntu:22.04", ("docker.io", "library/ubuntu:22.04")),
    ("docker.io/library/ubuntu:22.04", ("docker.io", "library/ubuntu:22.04")),
    ("index.docker.io/nvidia/cuda:12.1.1-runtime-ubuntu22.04", ("docker.io", "nvidia/cuda:12.1.1-runtime-ubuntu22.04")),
    ("nvcr.io/nvidia/tensorflow:23.12-tf2-py3", ("nvcr.io", "nvidia/tensorflow:23.12-tf2-py3")),
    ("localhost:5000/envgen/x:1", ("localhost:5000", "envgen/x:1")),
    ("localhost/x", ("localhost", "x")),
    (f"debian:bookworm-slim@{DIGEST}", ("docker.io", f"library/debian:bookworm-slim@{DIGEST}")),
])
def test_split_registry(ref: str, expected: tuple[str, str]) -> None:
    assert split_registry(ref) == expected


@pytest.mark.parametrize(("ref", "registries", "expected"), [
    ("ubuntu:22.04", HUB, "mirror.example.org:5000/library/ubuntu:22.04"),
    ("library/ubuntu:22.04", HUB, "mirror.example.org:5000/library/ubuntu:22.04"),
    ("nvidia/cuda:12.1.1-runtime-ubuntu22.04", HUB, "mirror.example.org:5000/nvidia/cuda:12.1.1-runtime-ubuntu22.04"),
    (f"debian:bookworm-slim@{DIGEST}", HUB, f"mirror.example.org:5000/library/debian:bookworm-slim@{DIGEST}"),
    ("nvcr.io/nvidia/tensorflow:23.12-tf2-py3", {"nvcr.io": "mirror.example.org/nvcr"},
     "mirror.example.org/nvcr/nvidia/tensorflow:23.12-tf2-py3"),
    ("nvcr.io/nvidia/tensorflow:23.12-tf2-py3", HUB, None),  # docker.io's mirror does not cover nvcr.io
    ("ubuntu:22.04", {"nvcr.io": "m.example.org"}, None),
    ("ubuntu:22.04", {}, None),
])
def test_mirror_ref(ref: str, registries: dict[str, str], expected: str | None) -> None:
    mirrored = mirror_ref(ref, registries)
    assert (mirrored.ref if mirrored else None) == expected


def test_mirror_is_a_build_arg_not_a_file_change() -> None:
    """Same files, same content hash, same tag; only BASE_IMAGE differs, and it keeps the digest."""
    from envgen.kb import load_kb

    kb = load_kb()
    profile = load_profile("legacy-maxwell", env={})
    pinned = profile.model_copy(update={"base": f"ubuntu:18.04@{DIGEST}"})
    plain = render_in_memory(plan_image(pinned, kb), UserConfig())
    config = UserConfig(mirrors=Mirrors(registries={"docker.io": "localhost:5000"}))
    mirrored = render_in_memory(plan_image(pinned, kb), config)
    assert plain.files == mirrored.files and plain.content_hash == mirrored.content_hash
    assert plain.tag == mirrored.tag and "BASE_IMAGE" not in plain.plan.build_args
    assert mirrored.plan.build_args["BASE_IMAGE"] == f"localhost:5000/library/ubuntu:18.04@{DIGEST}"
    assert f"ARG BASE_IMAGE=ubuntu:18.04@{DIGEST}\n".encode() in mirrored.files["Dockerfile"]


def test_profile_mirror_and_user_mirror_merge() -> None:
    from envgen.kb import load_kb

    profile = load_profile("ngc-tensorflow", env={})
    profile = profile.model_copy(update={"mirrors": Mirrors(registries={"nvcr.io": "m.example.org/nvcr"})})
    ctx = render_in_memory(plan_image(profile, load_kb()), UserConfig())
    assert ctx.plan.build_args["BASE_IMAGE"].startswith("m.example.org/nvcr/nvidia/tensorflow:23.12-tf2-py3")


@pytest.mark.parametrize(("cause", "words"), [
    ("unreachable", ["does not answer", "mirrors.registries.docker.io"]),
    ("missing", ["has no mirror.example.org:5000/library/ubuntu:22.04", "docker push"]),
    ("denied", ["refused", "docker login mirror.example.org:5000"]),
])
def test_mirror_failure_is_one_line_with_mirror_image_and_fix(cause: str, words: list[str]) -> None:
    mirrored = mirror_ref("ubuntu:22.04", HUB)
    assert mirrored is not None
    err = mirror_failure(mirrored, RegistryError("x", cause=cause), "the base image")
    line = err.one_line()
    assert "\n" not in line and "mirror.example.org:5000" in line and "ubuntu:22.04" in line
    assert "fix:" in line and all(w in line for w in words)
