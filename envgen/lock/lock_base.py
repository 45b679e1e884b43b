"""What `envgen lock` reads from the engine: the base image's digest and the apt packages at the
exact versions the base's own package lists give.

Base digest: for a registry image, the manifest digest the registry (or the mirror the engine is
configured with) serves for the tag, read through the engine's distribution endpoint
(``docker.images.get_registry_data``): ``name:tag@sha256:...`` is what FROM then uses. A locally
made base (``local_base: true``, e.g. debootstrap + ``docker import``) was never pushed anywhere and
has no manifest digest; the lock records the engine's image ID instead (the sha256 of the image's
config, which changes whenever its content does), and a build checks that the tag still names that
image before it starts.

apt: ``apt-get install --simulate --no-install-recommends`` in a throw-away container of the base
(after ``apt-get update``, with the proxy CA mounted read-only, as builds get it as a secret) lists
every package that would be installed with its version; all of them are pinned ``name=version``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from envgen.errors import InputError
from envgen.imageref import parse_ref
from envgen.layout import WORKSPACE
from envgen.paths import build_scripts_dir
from envgen.plan.lockfile import AptEntry

if TYPE_CHECKING:
    from docker import DockerClient

_INST_RE = re.compile(r"^Inst (?P<name>\S+) (?:\[[^\]]*\] )?\((?P<version>\S+) ")


@dataclass(frozen=True)
class BaseLock:
    image: str
    field: str  # "base-digest" (registry manifest digest) or "base-image-id" (local engine)
    value: str
    note: str


def lock_base(client: DockerClient, image: str, *, local: bool) -> BaseLock:
    """The base's digest: from the registry for registry images, the engine's image ID for local ones."""
    from docker.errors import APIError, ImageNotFound

    named = parse_ref(image)
    name = named.tagged
    if local:
        try:
            found = client.images.get(name)
        except ImageNotFound:
            raise InputError(f"local base image {name} is not in this engine",
                             fix="make it first (scripts/make-base-image), then run envgen lock again") from None
        return BaseLock(name, "base-image-id", str(found.id),
                        "local_base: no registry digest exists; the engine's image ID is checked before each build")
    if named.digest:
        return BaseLock(name, "base-digest", named.digest, "digest given in the profile")
    try:
        data = client.images.get_registry_data(name)
    except APIError as exc:
        detail = str(getattr(exc, "explanation", None) or exc).splitlines()[0]
        raise InputError(f"the registry of base image {name} did not give its digest: {detail}",
                         fix="check the name, or configure a registry mirror the engine can reach") from None
    return BaseLock(name, "base-digest", str(data.id), "manifest digest served by the registry at lock time")


def check_local_base(client: DockerClient, image: str, image_id: str, lock_file: str) -> str | None:
    """Before building a locked local base: the tag must name an image here. A local base is made on each
    machine (debootstrap), so another image ID than the lock's is said, not refused: the lock's exact apt
    and pip pins still decide what the image holds (an apt version the mirror no longer has fails the
    build by name). Returns that sentence, or None when the ID is the lock's."""
    from docker.errors import ImageNotFound

    try:
        found = client.images.get(image)
    except ImageNotFound:
        raise InputError(f"local base image {image} is not in this engine (the lock {lock_file} pins {image_id})",
                         fix="make the base image (scripts/make-base-image) and run envgen lock again") from None
    if found.id != image_id:
        return (f"local base image {image} is {found.id[:19]} here; the lock {lock_file} was made with "
                f"{image_id[:19]} (a local base is made on each machine): building on it with the lock's apt and "
                "pip pins; run `envgen lock` again to record this base")
    return None


def check_registry_base(client: DockerClient, ref: str) -> None:
    """Before building: a digest-pinned base must exist in the engine or in the registry."""
    from docker.errors import APIError, ImageNotFound, NotFound

    try:
        client.images.get(ref)
        return
    except ImageNotFound:
        pass
    try:
        client.images.get_registry_data(ref)
    except (NotFound, APIError) as exc:
        detail = str(getattr(exc, "explanation", None) or exc).splitlines()[0]
        raise InputError(f"the registry no longer serves base {parse_ref(ref).tagged} at {parse_ref(ref).digest} "
                         f"({detail})",
                         fix="run envgen lock again to pin the tag's current digest, or configure a mirror "
                             "that still has this digest") from None


def ensure_local(client: DockerClient, ref: str) -> None:
    """Pull ``ref`` (``name@sha256:...``) unless the engine has it: apt resolves inside it."""
    from docker.errors import APIError, ImageNotFound

    try:
        client.images.get(ref)
    except ImageNotFound:
        try:
            client.images.pull(ref)
        except APIError as exc:
            detail = str(getattr(exc, "explanation", None) or exc).splitlines()[0]
            raise InputError(f"base {ref} cannot be pulled to resolve its apt packages: {detail}",
                             fix="check the registry (or a mirror) is reachable") from None


def parse_simulation(text: str) -> tuple[AptEntry, ...]:
    """``apt-get install -s`` output -> the packages it would install, at their versions."""
    found: dict[str, AptEntry] = {}
    for line in text.splitlines():
        match = _INST_RE.match(line)
        if match:
            found[match.group("name")] = AptEntry(match.group("name"), match.group("version"))
    return tuple(sorted(found.values(), key=lambda e: e.name))


APT_MIRROR_SCRIPT = "apt-mirror.sh"


def apt_script(packages: Sequence[str], apt_mirror: str | None) -> str:
    lines = ["set -eu"]
    if apt_mirror:  # the Dockerfiles' substitution (envgen/sh/apt-mirror.sh, copied beside this script)
        lines.append(f"sh {WORKSPACE}/{APT_MIRROR_SCRIPT} {shlex.quote(apt_mirror)} /etc/apt"
                     f" /etc/ssl/certs/ca-certificates.crt {WORKSPACE}/ca.pem")
    lines += [
        f"if [ -f {WORKSPACE}/ca.pem ]; then",
        f"  echo 'Acquire::https::CAInfo \"{WORKSPACE}/ca.pem\";' > /etc/apt/apt.conf.d/99envgen-ca; fi",
        f"apt-get update -qq > {WORKSPACE}/update.log 2>&1 || {{ cat {WORKSPACE}/update.log; exit 1; }}",
        "apt-get install -s --no-install-recommends " + " ".join(shlex.quote(p) for p in packages)
        + f" > {WORKSPACE}/simulate.txt",
    ]
    return "\n".join(lines) + "\n"


def lock_apt(client: DockerClient, image: str, packages: Sequence[str], *, ca_bundle: Path | None,
             apt_mirror: str | None) -> tuple[AptEntry, ...]:
    """Every package ``apt-get install --no-install-recommends PACKAGES`` installs on ``image``."""
    from envgen.docker.run import run_container

    if not packages:
        return ()
    with tempfile.TemporaryDirectory(prefix="envgen-apt-lock-") as tmp:
        work = Path(tmp)
        work.chmod(0o777)
        (work / "lock.sh").write_text(apt_script(packages, apt_mirror), encoding="utf-8")
        shutil.copyfile(build_scripts_dir() / APT_MIRROR_SCRIPT, work / APT_MIRROR_SCRIPT)
        if ca_bundle is not None and ca_bundle.is_file():
            shutil.copyfile(ca_bundle, work / "ca.pem")
        result = run_container(client, image, ["/bin/sh", f"{WORKSPACE}/lock.sh"], workdir=work, user="0:0",
                               timeout_s=600)
        if result.exit_code != 0:
            tail = "\n".join(result.output.splitlines()[-8:])
            raise InputError(f"apt could not resolve {' '.join(packages)} in {image} (exit {result.exit_code}): "
                             f"{tail}", fix="check the package names and that the apt archive is reachable")
        text = (work / "simulate.txt").read_text(encoding="utf-8")
        for path in work.iterdir():
            path.unlink()
    return parse_simulation(text)


def base_manifests(client: DockerClient, image: str, *, local: bool, platforms: Sequence[str]) -> str:
    """The lock's ``base-manifests`` value: ``platform=digest`` for each of ``platforms``, ``platform=-`` where the
    base holds none (a local base on an engine with the classic image store is one platform's image)."""
    found = base_platforms(client, parse_ref(image).tagged if local else image, local=local)
    return " ".join(f"{platform}={found.get(platform, '-')}" for platform in platforms)


def base_platforms(client: DockerClient, name: str, *, local: bool) -> dict[str, str]:
    """platform -> the digest that pins it: a local index's per-platform manifests (the engine's containerd store,
    read from `docker save`'s OCI layout); a local single-platform image's ID; a registry base's index digest for
    each platform the registry lists (the index digest pins every platform's manifest)."""
    from envgen.docker.engine import engine_info

    if not local:
        data = client.images.get_registry_data(name)
        listed = data.attrs.get("Platforms") or []
        return {f"{p.get('os')}/{p.get('architecture')}": str(data.id) for p in listed}
    found = client.images.get(name)
    if not engine_info(client).containerd_store:
        return {f"{found.attrs.get('Os')}/{found.attrs.get('Architecture')}": str(found.id)}
    with tempfile.TemporaryFile(prefix="envgen-base-") as saved:
        for chunk in found.save(named=False):
            saved.write(chunk)
        saved.seek(0)
        return saved_platforms(saved)


def saved_platforms(saved: IO[bytes]) -> dict[str, str]:
    """platform -> manifest digest of the image in an OCI-layout tar (`docker save` on the containerd store): its
    index's manifests with a platform (attestations, ``unknown/unknown``, left out)."""
    import json
    import tarfile

    with tarfile.open(fileobj=saved) as tar:
        def blob(name: str) -> dict[str, Any]:
            member = tar.extractfile(name)
            return {} if member is None else dict(json.load(member))

        top = blob("index.json")["manifests"][0]
        inner = blob(f"blobs/sha256/{top['digest'].split(':', 1)[1]}")
        if "manifests" not in inner:  # one platform's manifest: its config names the platform
            config = blob(f"blobs/sha256/{inner['config']['digest'].split(':', 1)[1]}")
            return {f"{config.get('os')}/{config.get('architecture')}": str(top["digest"])}
        return {f"{m['platform']['os']}/{m['platform']['architecture']}": str(m["digest"])
                for m in inner["manifests"] if m.get("platform", {}).get("os") not in (None, "unknown")}
