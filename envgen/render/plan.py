"""Everything the templates need for one profile, written from its image plan (``envgen.plan.image``): the
template input (``TemplateInput``).

Pure: no files written, no Docker. Mirror values become build args (never template input), so
they change neither the rendered files nor the hashes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envgen import __version__, layout
from envgen.config import UserConfig, merge_mirrors
from envgen.errors import InputError, RenderError
from envgen.mirrors import Credential, mirror_ref, netrc_text, redact, split_credential
from envgen.plan.extensions import SourceBuild
from envgen.plan.image import ImagePlan
from envgen.plan.lockfile import Lock, LockEntry, Pins, wheelhouse_covers
from envgen.plan.parts import BasePin, PythonSetup
from envgen.profile.model import Mirrors, Profile
from envgen.render.hashing import profile_hash
from envgen.vocabulary import (
    LABEL_CONTENT_HASH,
    LABEL_GPU_REQUIRED,
    LABEL_PROFILE,
    LABEL_PROFILE_HASH,
    LABEL_VERSION,
    SEALED_LABELS,
)

# Placeholders the files are rendered and hashed with; the writer swaps in the real hash.
CONTENT_HASH_TOKEN = "@@ENVGEN_CONTENT_HASH@@"
SHORT_HASH_TOKEN = "@@ENVGEN_CONTENT_HASH_12@@"


@dataclass(frozen=True)
class PipSources:
    index_urls: tuple[str, ...]
    find_links: tuple[str, ...]


@dataclass(frozen=True)
class TemplateInput:
    """Template input for one profile (its image plan as the templates read it), plus what the builder needs beside
    the files."""

    profile: Profile
    version: str
    profile_hash: str
    installer: str
    base: BasePin
    python_setup: PythonSetup
    pins: Pins
    pip: PipSources
    micromamba: Mapping[str, str]
    conda_pip: str
    env: tuple[tuple[str, str], ...]
    labels: tuple[tuple[str, str], ...]
    runtime_apt: tuple[str, ...]
    expected: Mapping[str, Any]  # what the smoke probe compares the image against: the plan's Expected.document()
    preflight: Mapping[str, Any]  # what the image's preflight checks before a command (ImagePlan.preflight)
    image: ImagePlan = field(repr=False, compare=False)  # the plan this writes (``plan.image.plan_image``)
    build_args: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)
    wheelhouse: Path | None = None
    # The logins written in the mirrors' URLs, as a netrc file: written beside the context, never into it, and
    # handed to the build as the secret layout.SECRET_NETRC (the URLs in build_args carry no login).
    netrc: str | None = field(default=None, repr=False)
    # The profile's lock file (pip profiles with `<profile>.lock.txt` beside them): when set,
    # requirements.lock / requirements.extra.txt hold its hashed sets, installed with --no-deps.
    lock: Lock | None = None
    # A profile of several platforms whose lock holds each one's set: (TARGETARCH, that platform's lock) per platform
    # (``plan.lock_platforms.platform_locks``); BuildKit's installing steps pick requirements.<TARGETARCH>.lock
    platform_locks: tuple[tuple[str, Lock], ...] = ()
    # Conda profiles with `<profile>.conda.txt` beside them: the explicit list micromamba installs.
    conda_lock: str | None = None
    # packages.pip entries PyPI has as an sdist only, built in stages of their own (plan.extensions)
    source_builds: tuple[SourceBuild, ...] = ()

    @property
    def uv_install(self) -> bool:
        """BuildKit builds of a locked pip profile install with uv from the lock (single stage, no resolution): the
        lock names uv's wheel, and the base's own Python (Debian or python images) runs it; sdist-only extension
        packages are built in stages of their own: the staged (pip) path (``plan.installers.uv``)."""
        return all(self.image.installer_part.uv_install(lock, bool(self.source_builds))
                   for lock in (self.lock, *(found for _, found in self.platform_locks)))

    @property
    def conda_env(self) -> bool:
        """The environment is a conda environment (``plan.installers``: environment.yml, micromamba)."""
        return self.image.installer_part.installer.conda_env

    def apt_pins(self, packages: Sequence[str]) -> tuple[str, ...]:
        """apt-get install arguments: with a lock that pins apt, every package the lock resolved for
        the runtime set at its exact version (``name=version``); other packages by name."""
        if self.lock is None or not self.lock.apt:
            return tuple(packages)
        locked = {entry.name: entry.line for entry in self.lock.apt}
        if set(packages) <= set(self.runtime_apt):
            return tuple(sorted(set(locked.values()) | {p for p in packages if p not in locked}))
        return tuple(locked.get(p, p) for p in packages)

    @property
    def uv_requirements(self) -> tuple[str, ...]:
        """The lock's tools the environment layer installs besides the environment set (pip)."""
        return tool_lines(self.lock)

    @property
    def cuda_wheels(self) -> tuple[LockEntry, ...]:
        """The lock's NVIDIA CUDA wheels uv installs in a layer of their own (the plan's choice:
        ``ImagePlan.cuda_layer``); () where uv does not install, and where each platform installs its own lock (the
        CUDA wheels' files differ per platform: they stay in each platform's environment set)."""
        return self.image.cuda_layer(self.lock) if self.uv_install and not self.platform_locks else ()

    def context(self, *, buildkit: bool) -> dict[str, Any]:
        return {
            "buildkit": buildkit,
            "profile": self.profile,
            "version": self.version,
            "profile_hash": self.profile_hash,
            "content_hash": CONTENT_HASH_TOKEN,
            "installer": self.installer,
            "base": self.base,
            "pins": self.pins,
            "pip": self.pip,
            "conda_pip": self.conda_pip,
            "conda_python": self.image.installer_part.conda_python,
            "conda_env": self.conda_env,
            "env": self.env,
            "labels": self.labels,
            "user": self.profile.user,
            "lock": self.lock,
            "tool_requirements": self.uv_requirements,
            "lock_platform": None,
            "cuda_wheels": self.cuda_wheels,
            "layout": layout,
        }


def tool_lines(lock: Lock | None) -> tuple[str, ...]:
    """A lock's tools the environment layer installs besides its environment set (pip)."""
    if lock is None:
        return ()
    names = {e.name for e in lock.environment}
    return tuple(e.line for e in lock.tools if e.name != "uv" and e.name not in names)


def labels(profile: Profile, base: BasePin, phash: str) -> tuple[tuple[str, str], ...]:
    """The image's labels: the user's own OCI metadata only where the profile gives it (``metadata:``), the facts
    every image has (title, description, revision, base), and envgen's under io.envgen.*."""
    oci = "org.opencontainers.image."
    values = {
        f"{oci}title": profile.name,
        f"{oci}description": profile.description or f"envgen profile {profile.name}",
        f"{oci}revision": CONTENT_HASH_TOKEN,
        f"{oci}base.name": base.image,
        LABEL_PROFILE: profile.name,
        LABEL_PROFILE_HASH: phash,
        LABEL_CONTENT_HASH: CONTENT_HASH_TOKEN,
        LABEL_VERSION: __version__,
        # Whether the smoke test must see a GPU: `envgen smoke IMAGE` requests one only then.
        LABEL_GPU_REQUIRED: "true" if profile.is_gpu else "false",
        # What only the seal of a passing probe sets, emptied: an image built on an envgen image (a team base, or
        # --no-smoke on one) never inherits its base's pass.
        **dict.fromkeys(SEALED_LABELS, ""),
    }
    if profile.metadata is not None:
        values.update({f"{oci}{key}": value for key, value in profile.metadata.model_dump().items() if value})
    if base.digest:
        values[f"{oci}base.digest"] = base.digest
    return tuple(sorted(values.items()))


# The mirrors whose logins reach the build as the netrc secret (pip and uv read it); a login in any other is refused.
_NETRC_MIRRORS = ("pip_index_url", "pip_extra_index_urls", "pytorch_wheels")


def mirror_logins(mirrors: Mirrors) -> tuple[Mirrors, str | None]:
    """``mirrors`` with the logins taken out of their URLs, and those logins as a netrc file (None: none). A login
    in a mirror that neither pip nor uv reaches (apt, conda, micromamba) would be a build argument, kept in the image's
    history: refused, one line naming the setting. A proxy's login stays (a predefined proxy argument: not kept)."""
    from dataclasses import replace

    found: list[Credential] = []

    def clean(key: str, url: str) -> str:
        bare, login = split_credential(url)
        if login is None:
            return url
        if key not in _NETRC_MIRRORS:
            raise RenderError(f"mirrors.{key} holds a login ({redact(url)}): it would reach the build as a "
                              "build argument, which the image's history keeps",
                              fix=f"give mirrors.{key} without user:password@ (an index that needs a login can be "
                                  "mirrors.pip_index_url, pip_extra_index_urls or pytorch_wheels)")
        if any(c.host == login.host and c != login for c in found):
            raise RenderError(f"two logins for {login.host} in the mirrors' URLs: a netrc holds one per host",
                              fix=f"use one login for {login.host}")
        found.append(login)
        return bare

    changes: dict[str, Any] = {}
    # http_proxy/https_proxy keep their logins: they reach the build as Docker's predefined proxy build arguments,
    # which the image's history leaves out (Docker's Dockerfile reference, "Predefined ARGs"), and a firewall's
    # proxy often needs one
    for key in ("pip_index_url", "conda_channel_alias", "apt_mirror", "micromamba_url", "pytorch_wheels"):
        value = getattr(mirrors, key)
        if value:
            changes[key] = clean(key, value)
    changes["pip_extra_index_urls"] = [clean("pip_extra_index_urls", u) for u in mirrors.pip_extra_index_urls]
    changes["conda_channels"] = {k: clean("conda_channels", v) for k, v in mirrors.conda_channels.items()}
    return replace(mirrors, **changes), (netrc_text(found) if found else None)


def build_args(mirrors: Mirrors, offline: bool, framework_index: bool = True,
               base_ref: str | None = None) -> dict[str, str]:
    """Build args for the builder; none of them reaches a rendered file. ``base_ref`` is the
    reference the Dockerfile's ``ARG BASE_IMAGE`` defaults to; a registry mirror for it becomes
    ``BASE_IMAGE`` (tag and digest kept)."""
    mirrors = mirror_logins(mirrors)[0]  # the logins reach the build as the netrc secret, never as an argument
    mirrored = mirror_ref(base_ref, mirrors.registries) if base_ref else None
    args = {
        "BASE_IMAGE": mirrored.ref if mirrored else None,
        "ENVGEN_FRAMEWORK_INDEX": None if framework_index else "0",
        "PIP_INDEX_URL": mirrors.pip_index_url,
        "PIP_EXTRA_INDEX_URL": " ".join(mirrors.pip_extra_index_urls) or None,
        "PIP_TRUSTED_HOST": " ".join(mirrors.pip_trusted_hosts) or None,
        "PIP_NO_INDEX": "1" if offline else None,
        "CONDA_CHANNEL_ALIAS": mirrors.conda_channel_alias,
        "CONDA_CHANNEL_MIRRORS": " ".join(f"{k}={v}" for k, v in sorted(mirrors.conda_channels.items()))
        or None,
        "APT_MIRROR": mirrors.apt_mirror,
        "MICROMAMBA_URL": mirrors.micromamba_url,
        "PYTORCH_WHEELS": mirrors.pytorch_wheels.rstrip("/") if mirrors.pytorch_wheels else None,
        "HTTP_PROXY": mirrors.http_proxy,
        "HTTPS_PROXY": mirrors.https_proxy,
        "NO_PROXY": mirrors.no_proxy,
    }
    out = {key: value for key, value in args.items() if value}
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):  # predefined args: tools read either case
        if key in out:
            out[key.lower()] = out[key]
    return dict(sorted(out.items()))


def render_context(
    install: ImagePlan,
    config: UserConfig | None = None,
    *,
    wheelhouse: Path | None = None,
    offline: bool = False,
    use_lock: bool = True,
) -> TemplateInput:
    """The template input for one profile, written from its image plan (``install``: the one the command made with
    ``envgen.plan.image.plan_image``; render never plans). ``use_lock``: read the lock file beside the profile's YAML
    file, if there is one (``envgen lock`` itself renders without it)."""
    config = config or UserConfig()
    profile = install.profile  # as planned: the values it left to the KB filled in (its hash covers them)
    mirrors = merge_mirrors(profile.mirrors, config.mirrors)
    part = install.installer_part
    if part.refusals:
        raise part.refusals[0].error()
    lock = install.chosen_lock() if use_lock else None
    base = install.base_part.pin(lock)
    phash = profile_hash(profile)
    written = TemplateInput(
        profile=profile,
        version=__version__,
        profile_hash=phash,
        installer=part.name,
        base=base,
        python_setup=part.python_setup,
        pins=install.pins,
        pip=PipSources(tuple(install.pip_index_urls), tuple(install.pip_find_links)),
        micromamba=part.micromamba,
        conda_pip=part.conda_pip,
        env=install.env,
        labels=labels(profile, base, phash),
        runtime_apt=part.runtime_apt,
        expected=install.expected.document(),
        preflight=install.preflight,
        image=install,
        secrets={layout.SECRET_CA_BUNDLE: str(config.ca_bundle)} if config.ca_bundle else {},
        lock=lock,
        platform_locks=install.chosen_platform_locks(lock),
        conda_lock=install.chosen_conda_lock() if use_lock else None,
        source_builds=tuple(install.source_builds),
    )
    return rerouted(written, mirrors, wheelhouse, offline)


def rerouted(plan: TemplateInput, mirrors: Mirrors, wheelhouse: Path | None, offline: bool) -> TemplateInput:
    """The same input with another route for its packages (``wheelhouse``, else mirrors.wheelhouse; ``offline``):
    the build args and the wheels the context carries change, its files and hashes do not."""
    from dataclasses import replace

    wheelhouse = _wheelhouse(wheelhouse, mirrors, offline)
    framework_index = not wheelhouse_covers(wheelhouse, plan.pins.pip)
    netrc = None if offline else mirror_logins(mirrors)[1]
    args = build_args(mirrors, offline, framework_index=framework_index, base_ref=plan.base.from_ref)
    return replace(plan, wheelhouse=wheelhouse, netrc=netrc, build_args=args)


def _wheelhouse(given: Path | None, mirrors: Mirrors, offline: bool) -> Path | None:
    wheelhouse = given
    if wheelhouse is None and mirrors.wheelhouse:
        wheelhouse = Path(mirrors.wheelhouse).expanduser()
    if offline and wheelhouse is None:
        raise InputError("--offline needs a wheelhouse", fix="pass --wheelhouse DIR or set mirrors.wheelhouse")
    return wheelhouse
