"""One command's session: the environment it runs in, and what every step of it reads, each made once on first use
(the knowledge base from check's cache, ``envgen.kb.cache``; the user config; the cache directory). The CLI makes one
per command and passes it down, so that a command loads the KB once however many steps read it; a library caller
that passes none gets a session of its own (``of``).

Nothing is read when a session is made: ``envgen --help`` and a check the caches serve import nothing more."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envgen.config import UserConfig
    from envgen.kb import KnowledgeBase
    from envgen.plan.image import ImagePlan
    from envgen.profile import Profile


@dataclass
class Session:
    env: Mapping[str, str] | None = None  # None: the process's environment, read when asked
    _kb: tuple[KnowledgeBase, str] | None = field(default=None, repr=False)
    _kb_key: str | None = field(default=None, repr=False)
    _config: UserConfig | None = field(default=None, repr=False)
    # the profiles a command looked an image up for, by name (run's host gate judges the one its tag came from)
    resolved: dict[str, Profile] = field(default_factory=dict, repr=False)
    _plans: dict[int, tuple[Profile, ImagePlan]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, session: Session | None, env: Mapping[str, str] | None = None) -> Session:
        """``session``, or a new one for ``env`` (a caller that has none)."""
        return session if session is not None else cls(env)

    @property
    def environ(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    @property
    def cache_dir(self) -> Path | None:
        from envgen.cache import cache_dir

        return cache_dir(self.environ)

    @property
    def kb(self) -> KnowledgeBase:
        return self.keyed_kb[0]

    @property
    def kb_key(self) -> str:
        """The key of the cached KB ('' when it is read without a cache: caches built on it are not kept), from the
        KB's files without loading it: a cache hit keyed on it (a run's profile and tag) needs no KB."""
        if self._kb_key is None:
            from envgen.kb.cache import kb_key

            self._kb_key = self._kb[1] if self._kb is not None else kb_key(self.cache_dir)
        return self._kb_key

    @property
    def keyed_kb(self) -> tuple[KnowledgeBase, str]:
        if self._kb is None:
            from envgen.kb.cache import load_kb_keyed

            self._kb = load_kb_keyed(self.cache_dir, key=self._kb_key)
            self._kb_key = self._kb[1]
        return self._kb

    @property
    def config(self) -> UserConfig:
        if self._config is None:
            from envgen.config import load_config

            # validated once for its data, then kept (envgen.compiled.validated): a run imports no pydantic_core
            self._config = load_config(self.env)
        return self._config

    def plan_of(self, profile: Profile) -> ImagePlan:
        """``plan_image(profile, self.kb)``, made once per profile object in this command (the tag's render and
        run's host gate read the same plan)."""
        found = self._plans.get(id(profile))
        if found is None or found[0] is not profile:
            from envgen.plan.image import plan_image

            found = self._plans[id(profile)] = (profile, plan_image(profile, self.kb))
        return found[1]
