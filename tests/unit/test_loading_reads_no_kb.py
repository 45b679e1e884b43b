"""Loading a profile reads no knowledge base (issue 28): what a profile leaves to the KB (an NGC release's CUDA, cuDNN
and Python, the CUDA of a torch build tag or of tensorflow[and-cuda]) is decided in planning (``plan.defaults``), so
a profile is loaded as written. Watched in a fresh interpreter, with an empty cache directory: every file opened under
the KB's data directory, and whether the KB's loader or its cache was imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus" / "users"
NGC = "name: ngc\nbase: nvcr.io/nvidia/pytorch:24.05-py3\ngpu: {targets: [A100]}\n"
# the two small files loading reads beside the profile: the framework distributions' names (lifted out of
# packages.pip) and the base families (whether a base's release row gives the CUDA and Python it leaves out)
ALLOWED = {"framework_distributions.yaml", "base_families.yaml"}

_WATCH = """
import json, sys
from pathlib import Path
from envgen.paths import kb_data_dir
data = str(kb_data_dir())
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].startswith(data):
        opened.append(Path(args[0]).name)
sys.addaudithook(hook)
from envgen.profile import load_profile
loaded = [load_profile(ref) for ref in sys.argv[1:]]
print(json.dumps({"opened": sorted(set(opened)), "cuda": [p.cuda for p in loaded],
                  "modules": sorted(m for m in sys.modules if m in ("envgen.kb.loader", "envgen.kb.cache"))}))
"""


def test_loading_opens_no_kb_table_and_imports_no_kb_loader(tmp_path: Path) -> None:
    ngc = tmp_path / "ngc.yaml"
    ngc.write_text(NGC, encoding="utf-8")
    refs = [str(ngc), str(CORPUS / "torch-cu121-no-cuda.yaml"), str(CORPUS / "tf-and-cuda-no-cuda.yaml"), "cpu-smoke",
            "modern-a100"]
    env = {**os.environ, "ENVGEN_CACHE_DIR": str(tmp_path / "cache"), "ENVGEN_PROFILE_PATH": ""}
    out = subprocess.run([sys.executable, "-c", _WATCH, *refs], check=True, capture_output=True, text=True, env=env,
                         timeout=120)
    seen = json.loads(out.stdout)
    assert seen["modules"] == [], f"loading imported {seen['modules']}"
    assert set(seen["opened"]) <= ALLOWED, f"loading read KB tables {sorted(set(seen['opened']) - ALLOWED)}"
    assert seen["cuda"][:3] == [None, None, None]  # as written: the KB's answer is planning's
    assert not (tmp_path / "cache").exists(), "loading wrote the KB cache"


def test_planning_decides_what_loading_left_with_the_same_reasons(tmp_path: Path) -> None:
    """The values and the reasons `envgen show` prints (the KB row each came from) are the plan's."""
    kb = load_kb()
    ngc = tmp_path / "ngc.yaml"
    ngc.write_text(NGC, encoding="utf-8")
    plan = plan_image(load_profile(str(ngc), kb=kb), kb)
    assert (plan.profile.cuda, plan.profile.cudnn, plan.profile.python) == ("12.4", "9.1.0.70", "3.10")
    assert [line.split(" (")[0] for line in plan.defaults] == ["cuda: '12.4'", "cudnn: '9.1.0.70'", "python: '3.10'"]
    assert all("ngc.yaml#" in line for line in plan.defaults)
    torch = plan_image(load_profile(str(CORPUS / "torch-cu121-no-cuda.yaml"), kb=kb), kb)
    assert torch.cuda.profile == torch.profile.cuda == "12.1" and torch.cuda.torch == "12.1"
    assert torch.expected.cuda == "12.1"  # the probe's expectation is the plan's
