"""The folder layout is the architecture: every import, a function's lazy ones and TYPE_CHECKING ones included,
points from a layer to a lower one (or stays inside its own folder). An arrow that runs back up fails here with
the file and line."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import envgen

PACKAGE = Path(envgen.__file__).resolve().parent

# Lowest first. A layer may import the layers of a lower rank; layers of one rank do not import each other.
RANKS: dict[str, int] = {
    "envgen": -1, "files": -1,  # the root (__version__) and atomic writes: below the store, which keys by the version
    "errors": 0, "paths": 0, "table": 0, "vocabulary": 0, "imageref": 0,  # root: __version__
    "layout": 0,  # where envgen puts things: the image's paths, the context's folders, the build secrets' ids
    "records": 0,  # the strict record types of the profile and the KB, validated by pydantic on demand
    "cache": 0,  # the one keyed store every cache keeps its entries in (the cache directory, keys, atomic writes)
    "kb": 1, "mirrors": 1,  # mirrors: references through registry mirrors (reads imageref)
    "pypi": 1,  # a package index's pages and each release's core metadata, kept in the cache directory
    "profile": 2,  # the profile model, its YAML source, its lock file
    "compiled": 1,  # the records' compiled validators and serialisers, kept in the store (envgen.cache)
    "parsed": 2,  # small YAML files parsed once per content, kept in the store
    "config": 3, "plan": 3,  # plan: the install plan and the probe's expectations, from profile + kb
    "check": 4,  # judges the plan
    "docker": 4,  # the engine: a leaf that raises its own typed errors (GpuRequestRefused; pipeline/ translates)
    "render": 5, "host": 5, "smoke": 5,  # render writes the plan; host reads the engine's facts through docker
    "lock": 7,  # resolving and pinning (uv, py-rattler, the base's digest, apt); pipeline builds with it
    "pipeline": 8, "suggest": 8,
    "cli": 9, "__main__": 10,
}


def _layer(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py") if rel.parts[0] != "__init__.py" else "envgen"


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "envgen":
            parts = node.module.split(".")
            if len(parts) > 1:
                out.append((node.lineno, parts[1]))
            else:  # from envgen import X: a submodule or a name of the root package
                out += [(node.lineno, alias.name if alias.name in RANKS else "envgen") for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name.split(".")[1]) for alias in node.names
                    if alias.name.startswith("envgen.")]
        elif isinstance(node, ast.Call) and _dynamic(node):
            target = _dynamic_target(node)
            if target is not None:
                out.append((node.lineno, target))
    return out


def _dynamic(node: ast.Call) -> bool:
    """importlib.import_module(...) or __import__(...): an import the statements above do not show."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")


def _dynamic_target(node: ast.Call) -> str | None:
    """The layer a dynamic import names: a literal "envgen.X..." or an f-string that starts so; None for a module
    outside envgen ("yaml"); UNSEEN for a name computed at run time, which always fails."""
    arg = node.args[0] if node.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        text = arg.value
    elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        text = str(arg.values[0].value)
        if not text.startswith("envgen."):
            return "UNSEEN"
    else:
        return "UNSEEN"
    if text != "envgen" and not text.startswith("envgen."):
        return None
    layer = text.split(".")[1] if text.count(".") else ""
    return layer or "UNSEEN"


def test_every_layer_has_a_rank() -> None:
    layers = {_layer(p) for p in PACKAGE.rglob("*.py") if "probe" not in p.parts}
    assert layers <= set(RANKS), f"give these a rank in RANKS: {sorted(layers - set(RANKS))}"


def test_no_import_points_up_or_sideways() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "probe" in path.relative_to(PACKAGE).parts:
            continue  # stdlib-only, runs inside images: it imports the frameworks it finds, and nothing of envgen
        source = _layer(path)
        for line, target in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if target == "UNSEEN":
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: a dynamic import whose module the layer "
                             "test cannot read: import it by name")
            elif target != source and RANKS[target] >= RANKS[source]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {source} (rank {RANKS[source]}) imports "
                             f"{target} (rank {RANKS[target]})")
    assert not wrong, "\n".join(wrong)


def test_dynamic_imports_are_read_too() -> None:
    """host/facts.py reached envgen.docker through importlib.import_module, which the statements above did not
    show: a dynamic import is read like a static one, and one whose module cannot be read fails."""
    tree = ast.parse('import importlib\nimportlib.import_module(f"envgen.docker.{m}")\n__import__("envgen.pipeline")\n'
                     'importlib.import_module(name)\nimportlib.import_module("yaml")\n')
    assert _imports(tree) == [(2, "docker"), (3, "pipeline"), (4, "UNSEEN")]


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts)


def _module_targets(tree: ast.AST, modules: set[str]) -> set[str]:
    """The envgen modules a file imports, each statement counted wherever it stands (top, a function's lazy
    import, TYPE_CHECKING) and dynamic ones too: ``from envgen.a import b`` names envgen.a.b where that is a
    module, else envgen.a; an f-string ``import_module(f"envgen.a.{x}")`` names every module under envgen.a."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Call) and _dynamic(node) and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.add(arg.value)
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                out |= {m for m in modules if m.startswith(str(arg.values[0].value))}
    return out & modules


def test_no_two_modules_import_each_other() -> None:
    """Inside a layer too: no two modules import each other (a lazy or TYPE_CHECKING import included), as
    check/context and check/libraries, kb/knowledge and kb/validate, plan/stack and plan/libraries once did."""
    paths = {_module(p): p for p in PACKAGE.rglob("*.py") if "probe" not in p.relative_to(PACKAGE).parts}
    graph = {name: _module_targets(ast.parse(path.read_text(encoding="utf-8")), set(paths)) - {name}
             for name, path in paths.items()}
    circles = sorted(f"{a} <-> {b}" for a, targets in graph.items() for b in targets if a < b and a in graph[b])
    assert not circles, "\n".join(circles)


def test_the_cycle_reader_sees_lazy_and_type_checking_imports() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from envgen.kb.knowledge import K\n"
                     "def f():\n    from envgen.kb import validate\n    import envgen.plan.stack\n"
                     'importlib.import_module(f"envgen.render.{m}")\n')
    modules = {"envgen.kb", "envgen.kb.knowledge", "envgen.kb.validate", "envgen.plan.stack", "envgen.render",
               "envgen.render.core", "envgen.render.plan"}
    assert _module_targets(tree, modules) == {"envgen.kb.knowledge", "envgen.kb.validate", "envgen.plan.stack",
                                               "envgen.render.core", "envgen.render.plan"}


# The engine is a leaf: docker/ reads only the root layer (errors, vocabulary, imageref...). Ranked above config,
# it once imported config for a constant, and config imports the profile model (and that the KB): the rank test
# above passed, as config ranks below docker.
LEAF_LAYERS = ("docker",)
NOT_UNDER_THE_ENGINE = ("profile", "kb", "config", "check", "plan")


def test_the_engine_imports_only_the_root_layer() -> None:
    wrong = []
    for layer in LEAF_LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            for line, target in _imports(ast.parse(path.read_text(encoding="utf-8"))):
                if target != layer and RANKS[target] > 0:
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: the engine ({layer}) imports {target}")
    assert not wrong, "\n".join(wrong)


def test_importing_the_engine_loads_no_profile_kb_config_check_or_plan() -> None:
    """What the static reader above cannot see (a module of the root layer that imports more) shows in a fresh
    interpreter's sys.modules."""
    code = ("import sys, envgen.docker.run\n"
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('envgen.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert "envgen.docker.run" in loaded
    above = [m for m in loaded if m.split(".")[1] in NOT_UNDER_THE_ENGINE]
    assert not above, f"importing envgen.docker.run loads {above}"


# render writes the plan it is given and never plans (issue #41): of the knowledge base it imports nothing, not even
# its types (the cache's location is envgen.cache's, not the KB's).
RENDER_KB_TYPES: set[str] = set()


def _kb_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "envgen":
                found += [(node.lineno, "envgen.kb") for alias in node.names if alias.name == "kb"]
            elif node.module.startswith("envgen.kb"):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("envgen.kb")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("envgen.kb"):
            found.append((node.lineno, node.value))  # importlib.import_module("envgen.kb...")
    return found


def test_render_imports_nothing_of_the_kb_but_types() -> None:
    wrong = [f"{path.relative_to(PACKAGE.parent)}:{line}: render imports {module}"
             for path in sorted((PACKAGE / "render").rglob("*.py"))
             for line, module in _kb_imports(ast.parse(path.read_text(encoding="utf-8")))
             if module not in RENDER_KB_TYPES]
    assert not wrong, "\n".join(wrong)
    # the reader sees what it must: a plain, a lazy and a dynamic import of the KB's code
    seen = _kb_imports(ast.parse("from envgen.kb.builds import x\ndef f():\n    import envgen.kb.versions\n"
                                 "importlib.import_module('envgen.kb.cache')\nfrom envgen import kb\n"))
    assert sorted(m for _, m in seen) == ["envgen.kb", "envgen.kb.builds", "envgen.kb.cache", "envgen.kb.versions"]
    # and nothing imports the cache's location through the KB's cache (its one home is envgen.cache)
    through_kb = [f"{path.relative_to(PACKAGE.parent)}" for path in sorted(PACKAGE.rglob("*.py"))
                  for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(node, ast.ImportFrom) and node.module == "envgen.kb.cache"
                  and any(alias.name == "cache_dir" for alias in node.names)]
    assert not through_kb, through_kb
    import envgen.kb.cache

    assert not hasattr(envgen.kb.cache, "cache_dir")


def test_render_takes_the_plan_and_no_kb() -> None:
    """render's entry points take the command's plan, never a profile and a KB to plan from (render never plans)."""
    import inspect
    import typing

    from envgen.render.core import render, render_in_memory
    from envgen.render.exports import export
    from envgen.render.plan import render_context

    for entry in (render, render_in_memory, render_context, export):
        hints = typing.get_type_hints(entry)
        params = list(inspect.signature(entry).parameters)
        assert "ImagePlan" in str(hints[params[0]]), entry.__name__
        assert not {"kb", "profile", "profiles", "plan"} & set(params[1:]), (entry.__name__, params)
        assert not [p for p, t in hints.items() if "KnowledgeBase" in str(t) or "Profile" in str(t)], entry.__name__
    planners = {"plan_image", "image_plan", "resolve_rows"}
    named = [f"{path.name}:{node.lineno}" for path in sorted((PACKAGE / "render").rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if (isinstance(node, ast.Name) and node.id in planners)
             or (isinstance(node, ast.Attribute) and node.attr in planners)
             or (isinstance(node, ast.alias) and node.name in planners)]
    assert not named, named


def test_render_writes_every_profile_from_its_plan(kb, tmp_path: Path) -> None:
    from envgen.plan.image import plan_image
    from envgen.profile import list_profiles, load_profile
    from envgen.render.core import render_in_memory

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"
    names = [s.name for s in list_profiles({})] + [str(p) for p in sorted(fixtures.glob("*.yaml"))]
    for name in names:
        plan = plan_image(load_profile(name, env={}), kb)
        rendered = render_in_memory(plan)
        assert rendered.plan.image is plan and rendered.files["Dockerfile"]
    assert len(names) >= 9
    # the exports too, given the command's plans (the cluster node selection is the plan's)
    from envgen.render.exports import export

    plans = [plan_image(load_profile(name, env={}), kb) for name in ("modern-a100", "cpu-smoke")]
    written = export(plans, "k8s", tmp_path)
    assert {p.name for p in written} >= {"modern-a100.job.yaml", "modern-a100.dra.yaml", "cpu-smoke.job.yaml"}


# What render still calls outside itself once given the plan, besides reading the plan's own objects (methods of
# ImagePlan, its parts, the lock, the profile) and the files it ships (paths): the build's route (mirrors, the user's
# config), where Jinja keeps compiled templates, and whether a wheelhouse given at build time covers the frameworks.
# Issue #41 counted 22 such calls before the plan held its base and installer parts.
RENDER_STAYS = {("render/blocks.py", "mirrors.py:pytorch_shell"), ("render/jinja.py", "cache.py:cache_dir"),
                ("render/plan.py", "mirrors.py:mirror_ref"), ("render/plan.py", "config.py:merge_mirrors"),
                ("render/plan.py", "plan/lockfile.py:wheelhouse_covers")}


def test_render_calls_out_only_for_the_route_once_given_the_plan(kb) -> None:
    from envgen.plan.image import plan_image
    from envgen.profile import list_profiles, load_profile
    from envgen.render.core import render_in_memory

    assert {"cpu-minimal", "legacy-maxwell", "modern-a100"} <= {s.name for s in list_profiles({})}
    root = str(PACKAGE) + "/"
    stays: set[tuple[str, str]] = set()

    def seen(frame, event: str, arg: object) -> None:  # type: ignore[no-untyped-def]
        caller = frame.f_back
        callee = frame.f_code.co_filename
        if event != "call" or caller is None or not caller.f_code.co_filename.startswith(root + "render/"):
            return
        if not callee.startswith(root) or callee.startswith(root + "render/"):
            return
        module, name = callee[len(root):], frame.f_code.co_qualname
        if module in ("paths.py", "records.py") or (module.startswith(("plan/", "profile/")) and "." in name):
            return  # the files render ships, a record made, the plan's own objects read
        stays.add((caller.f_code.co_filename[len(root):], f"{module}:{name}"))

    for name in ("cpu-minimal", "legacy-maxwell", "modern-a100"):  # locked pip, conda, a torch index
        profile = load_profile(name, env={})
        plan = plan_image(profile, kb)
        sys.setprofile(seen)
        try:
            render_in_memory(plan)
        finally:
            sys.setprofile(None)
    assert stays <= RENDER_STAYS, sorted(stays - RENDER_STAYS)
    assert ("render/plan.py", "config.py:merge_mirrors") in stays  # the profiler saw render's calls
