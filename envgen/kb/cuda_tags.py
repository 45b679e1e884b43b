"""What an nvidia/cuda tag says: the tag scheme read against cuda_images.yaml's rows (which patch releases, OSes
and cuDNN flavours NVIDIA published, and which went end-of-life or were deleted)."""

from __future__ import annotations

from collections.abc import Sequence

from envgen.kb.images import CUDA_TAG_RE
from envgen.kb.models import BaseImageInfo, CudaImageRow, CudaTagRelease, ImageStatus, OsImageRow
from envgen.kb.versions import minor


def cuda_image(cuda_images: Sequence[CudaImageRow], os_images: Sequence[OsImageRow], image_ref: str, tag: str,
               digest: str | None) -> BaseImageInfo:
    """An nvidia/cuda image read from its tag (<cuda>-[cudnnN-](base|runtime|devel)-<os>) against its CUDA minor's
    row: available, unknown, end-of-life or deleted, with why."""
    m = CUDA_TAG_RE.match(tag)
    scheme = "https://hub.docker.com/r/nvidia/cuda (tag scheme)"
    info = BaseImageInfo
    if not m:
        return info(image=image_ref, status="unknown", digest=digest, source=scheme,
                    reason=f"tag {tag!r} does not follow <cuda>-[cudnnN-](base|runtime|devel)-<os>")
    cuda, cudnn_tag, os_name, flavor = m.group("cuda"), m.group("cudnn"), m.group("os"), m.group("flavor")
    # the tag's cuDNN suffix: "8" for -cudnn8-, "" for a bare -cudnn- (CUDA >= 12.4), None for no cuDNN
    suffix = cudnn_tag[len("cudnn") :] if cudnn_tag else None
    row = next((r for r in cuda_images if r.cuda == minor(cuda)), None)
    # the cuDNN major the image carries; a bare -cudnn- means the row's cudnn_bare (9), unknown without a row
    cudnn = (row.cudnn_bare if row is not None else None) if suffix == "" else suffix
    python = next((o.python for o in os_images if o.os == os_name), None)
    if row is None:
        return info(image=image_ref, status="unknown", cuda=cuda, cudnn=cudnn, os=os_name, python=python,
                    digest=digest, flavor=flavor, reason=f"CUDA {cuda} is not in the tag table", source=scheme)
    release = row.release(cuda)
    status, reason, row_key = _tag_status(row, release, cuda, os_name, suffix)
    return info(image=image_ref, status=status, cuda=cuda, cudnn=cudnn, os=os_name, python=python, digest=digest,
                flavor=flavor, reason=reason, row_key=row_key, source=row.source)


def _tag_status(row: CudaImageRow, release: CudaTagRelease | None, cuda: str, os_name: str,
                suffix: str | None) -> tuple[ImageStatus, str, str]:
    """(status, reason, row_key) of an nvidia/cuda tag in its CUDA minor's row: available, unknown (the row's
    lists lack it; row_key empty when a partial list proves nothing absent), end-of-life or deleted."""
    problems = _tag_problems(row, cuda, os_name, suffix) if release is None else _release_problems(
        row, release, os_name, suffix
    )
    status: ImageStatus = row.status if row.status == "deleted" or not problems else "unknown"
    reason = "; ".join(problems)
    row_key = row.key
    if problems and release is not None and not release.complete:
        row_key = ""  # a partial list proves nothing absent: base-tag-unknown (a warning)
        reason += f" (the list of {release.patch} tags is partial)"
    if release is not None and release.status != "supported" and not problems:
        status = "deleted" if release.status == "deleted" else "end-of-life"
        reason = _eol_reason(release)
    return status, reason, row_key


def _tag_problems(row: CudaImageRow, cuda: str, os_name: str, suffix: str | None) -> list[str]:
    """Why a tag cannot exist, from a row's union lists (a patch the row does not list at all)."""
    problems = []
    if cuda not in row.patches:
        problems.append(f"no {cuda} tags were published (known: {', '.join(row.patches)})")
    if os_name not in row.os:
        problems.append(f"no {os_name} tags for CUDA {row.cuda} (known: {', '.join(row.os)})")
    if suffix is not None and suffix not in row.cudnn:
        problems.append(f"no cudnn{suffix} tags for CUDA {row.cuda}")
    return problems


def _release_problems(row: CudaImageRow, release: CudaTagRelease, os_name: str, suffix: str | None) -> list[str]:
    """Why a tag of a listed patch release does not exist: its OS or cuDNN flavour is not among NVIDIA's tags."""
    if release.status == "deleted":
        return []
    if os_name not in release.os:
        return [f"no {release.patch} tags for {os_name} (listed: {', '.join(release.os)})"]
    if suffix is None:
        return []
    with_cudnn = [r.patch for r in row.releases if r.cudnn is not None and r.status != "deleted"]
    if release.cudnn is None:
        return [f"CUDA {release.patch} has no cuDNN tags, only base/runtime/devel "
                f"(cuDNN tags exist for {', '.join(with_cudnn) or 'no patch of ' + row.cuda})"]
    if suffix != release.cudnn:
        return [f"CUDA {release.patch}'s cuDNN tags are spelled -cudnn{release.cudnn}-, not -cudnn{suffix}-"]
    if os_name not in release.cudnn_os:
        return [f"no cudnn{suffix} tags for {release.patch} on {os_name} "
                f"(NVIDIA lists them for: {', '.join(release.cudnn_os)})"]
    return []


def _eol_reason(release: CudaTagRelease) -> str:
    if release.status == "deleted":
        return f"the {release.patch} tags were deleted"
    when = f" on {release.eol_on}" if release.eol_on else ""
    gone = (
        f"; NVIDIA's EOL chart gives {release.deletion_planned} as the estimated deletion date"
        if release.deletion_planned
        else "; NVIDIA deletes end-of-life tags six months after they go end-of-life"
    )
    return f"CUDA {release.patch} images went end-of-life{when} (no updates, known vulnerabilities){gone}"
