"""The image's user (``user.name``) must be a name its base does not already hold: create-user.sh would otherwise
fail the build after the base is fetched (``groupadd: group 'root' already exists``). The names come from the
knowledge base's OS row (base_images.yaml: ``accounts``, a recorded run of the image)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding


def user_name_taken(ctx: CheckContext) -> list[Finding]:
    info = ctx.base
    row = ctx.kb.os_image(info.os) if info is not None and info.os else None
    name = ctx.profile.user.name
    if row is None or name not in row.accounts:
        return []
    return [finding("error", "user-name-taken",
                    f"user.name {name!r} is a user or group {ctx.profile.base} already has ({row.os}): the build "
                    "would fail making it (groupadd: group already exists)",
                    "choose another name (the default is envgen); to run as root, use `envgen run --as-root`",
                    row.accounts_source or row.source)]


RULES = [user_name_taken]
