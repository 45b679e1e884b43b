"""The base-image answers the KB builds in code (``BaseImageInfo(...)``, a record made without validation on
`envgen check`'s path) are the rows the strict model accepts: each one validates back to itself."""

from __future__ import annotations

import pytest

from envgen.kb import load_kb
from envgen.kb.models import BaseImageInfo

IMAGES = [
    "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "nvidia/cuda:10.1-cudnn7-runtime-ubuntu18.04",
    "nvidia/cuda:11.0.3-cudnn8-runtime-ubuntu20.04", "nvidia/cuda:12.2.0-cudnn8-devel-ubuntu22.04",
    "nvidia/cuda:12.4.1-base-ubuntu22.04", "nvidia/cuda:13.0.1-cudnn-runtime-ubuntu24.04",
    "nvidia/cuda:99.1.0-runtime-ubuntu22.04", "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04@sha256:" + "a" * 64,
    "nvidia/cuda:latest", "nvcr.io/nvidia/pytorch:23.12-py3", "nvcr.io/nvidia/tensorflow:23.12-tf2-py3",
    "nvcr.io/nvidia/pytorch:24.10-py3", "debian:bookworm-slim", "ubuntu:22.04", "python:3.12-slim",
]


@pytest.mark.parametrize("image", IMAGES)
def test_every_base_answer_is_a_valid_row(image: str) -> None:
    info = load_kb().base_image(image)
    if info is None:
        return
    assert BaseImageInfo.model_validate(info.model_dump()) == info
