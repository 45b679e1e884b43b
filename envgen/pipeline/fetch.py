"""Whether this host reaches what a build downloads (``render.downloads``), tried before the build: one HEAD request
per host, all at once, each given ``TIMEOUT_S``; any HTTP answer is an answer (a 403 or 404 means the host is
there), a name that does not resolve, a refused or timed-out connection is not. Answers are kept for ``KEEP_S`` in
the state directory, so a doctor and a build a minute later ask once. `envgen build` stops in a second with the line
naming what cannot be reached and where it can come from instead; `envgen doctor` says it per profile."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

from envgen.errors import BuildFailed
from envgen.files import write_atomically
from envgen.render.downloads import Download

TIMEOUT_S = 3.0
KEEP_S = 300.0
Probe = Callable[[str], str | None]


def try_url(url: str, proxies: dict[str, str] | None = None) -> str | None:
    """None where ``url``'s host answers (any HTTP status, a TLS handshake refused by its certificate included);
    else why not, in a few words. ``proxies``: the build's own (mirrors.http_proxy/https_proxy), else this host's."""
    opener = urllib.request.build_opener(*([urllib.request.ProxyHandler(proxies)] if proxies else []))
    try:
        with opener.open(urllib.request.Request(url, method="HEAD"), timeout=TIMEOUT_S):
            return None
    except urllib.error.HTTPError as exc:
        exc.close()
        return None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLError):
            return None
        return str(getattr(reason, "strerror", None) or reason)
    except (TimeoutError, OSError) as exc:
        return str(getattr(exc, "strerror", None) or exc or "timed out")


def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def unreachable(found: list[Download], state_dir: Path, probe: Probe = try_url) -> dict[str, str]:
    """host -> why it cannot be reached, for the hosts of ``found`` (answers kept for KEEP_S)."""
    path = state_dir / "reach.json"
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = {}
    now = time.time()
    hosts = sorted({_host(d.url) for d in found if not d.url.startswith(("file:", "/"))})
    fresh = {h: kept[h] for h in hosts if isinstance(kept.get(h), list) and now - kept[h][0] < KEEP_S}
    asked = [h for h in hosts if h not in fresh]
    if asked:
        url_of = {_host(d.url): d.url for d in found}
        with ThreadPoolExecutor(max_workers=len(asked)) as pool:
            for host, why in zip(asked, pool.map(lambda h: probe(url_of[h]), asked), strict=True):
                fresh[host] = [now, why]
        state_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps({**kept, **fresh}, sort_keys=True) + "\n")
    return {h: str(fresh[h][1]) for h in hosts if fresh[h][1] is not None}


def blocked(found: list[Download], state_dir: Path, probe: Probe = try_url) -> list[tuple[Download, str]]:
    """Each download whose host this host cannot reach, with why."""
    down = unreachable(found, state_dir, probe)
    return [(d, down[_host(d.url)]) for d in found if _host(d.url) in down]


def probe_for(http_proxy: str | None, https_proxy: str | None) -> Probe:
    """``try_url`` through the proxies the build is given, where the profile or config names any."""
    proxies = {k: v for k, v in (("http", http_proxy), ("https", https_proxy)) if v}
    return (lambda url: try_url(url, proxies)) if proxies else try_url


def ensure_fetchable(found: list[Download], state_dir: Path, *, wheelhouse: Path | None, offline: bool,
                     echo: Callable[[str], None], probe: Probe = try_url, profile_arg: str = "PROFILE") -> None:
    """Raise BuildFailed naming each download this host cannot reach, before the build starts. With --offline and
    a wheelhouse, pip's downloads come from the wheelhouse; with a wheelhouse alone, pip still asks its index, so
    an unreachable package index is said (pip retries it) but does not stop the build (the wheelhouse may hold all
    it needs); a framework index is listed only where the wheelhouse lacks the framework's wheels."""
    needed = [d for d in found if not (d.pip and offline and wheelhouse is not None)]
    failed = blocked(needed, state_dir, probe)
    if wheelhouse is not None:
        for download, why in [(d, w) for d, w in failed if d.index]:
            echo(f"warning: the build's pip asks {download.line()}, which this host cannot reach ({why}); the "
                 f"wheelhouse {wheelhouse} serves what it holds (add --offline to ask only the wheelhouse)")
        failed = [(d, w) for d, w in failed if not d.index]
    if failed:
        raise BuildFailed(
            "the build needs " + "; ".join(f"{d.line()} ({why})" for d, why in failed)
            + ", which this host cannot reach: the build would fail at its first download",
            fix="route it: " + ", ".join(dict.fromkeys(d.route for d, _ in failed))
            + (f" or `envgen build {profile_arg} --wheelhouse DIR --offline` (wheels fetched where the index is "
               "reachable)" if any(d.pip for d, _ in failed) else "")
            + f"; `envgen doctor --profile {profile_arg}` says what this host reaches")
