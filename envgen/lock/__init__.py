"""Locks: resolving a profile's requirements to exact versions and hashes (uv, py-rattler), pinning the base
image and its apt packages, the wheel platforms and the wheelhouse, and the resolution witness of
``envgen check --resolve``. Below ``pipeline/`` (which builds with what is locked here), above ``render/``
and ``docker/``."""
