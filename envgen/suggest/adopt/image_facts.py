"""Run inside an image by `envgen init --from IMAGE` (standard library only, Python 3.7+; copied in, never committed):
prints one JSON object: the interpreter, its version, its prefix, whether it is a venv or conda, every installed
distribution (name, version) as ``pip freeze`` would list it, and what the frameworks report of their build (torch's
CUDA and arch list, TensorFlow's build info), each import tried in a child process so a crash stays there."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

try:
    from importlib import metadata
except ImportError:  # Python 3.7
    import importlib_metadata as metadata  # type: ignore[no-redef]

SKIP = {"pip", "setuptools", "wheel", "distribute"}  # what pip freeze leaves out by default
FRAMEWORKS = {
    "torch": "import json, torch; print(json.dumps({'version': torch.__version__, 'cuda': torch.version.cuda, "
             "'arch_list': list(torch._C._cuda_getArchFlags().split()) if torch.version.cuda else []}))",
    "tensorflow": "import json, tensorflow as tf; info = dict(tf.sysconfig.get_build_info()); "
                  "print(json.dumps({'version': tf.__version__, 'cuda': info.get('cuda_version'), "
                  "'cudnn': info.get('cudnn_version')}))",
}


def _distributions() -> list[tuple[str, str]]:
    seen: dict[str, tuple[str, str]] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower() not in SKIP and name.lower() not in seen:
            seen[name.lower()] = (name, dist.version)
    return sorted(seen.values(), key=lambda nv: nv[0].lower())


def _framework(code: str) -> Any:
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": str(exc)}
    if out.returncode != 0:
        return {"error": out.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]}
    return json.loads(out.stdout.decode("utf-8", "replace").strip().splitlines()[-1])


def main() -> None:
    dists = _distributions()
    names = {n.lower() for n, _ in dists}
    print(json.dumps({
        "python": sys.executable,
        "version": ".".join(str(part) for part in sys.version_info[:3]),
        "prefix": sys.prefix,
        "venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
        "distributions": [{"name": n, "version": v} for n, v in dists],
        "frameworks": {k: _framework(code) for k, code in FRAMEWORKS.items() if k in names},
    }, sort_keys=True))


if __name__ == "__main__":
    main()
