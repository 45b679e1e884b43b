"""Library tier, what the base image provides (the profile's base_provides): the base really holds the
framework versions and CUDA builds the profile declares, imported from the base's own environment (not from
the environment envgen installs into: the expected document's ``base_provides.envgen_env``), and the versions of
the other distributions base_provides.packages names (envgen neither downloads nor installs a packages.pip line the base satisfies: this is what checks it).
Standard library only (on Python 3.7, setuptools' pkg_resources reads the versions); Python 3.7+; no GPU
needed.

Reads ctx.library_frameworks (filled by libs' libraries.frameworks: version, CUDA build) and the
distributions' metadata for torchvision/torchaudio and the packages."""

import os

from ..core.common import Fail
from ..core.versions import version_matches

TIER = "libraries"
# frameworks: keys -> (import name, distribution)
MODULES = {"pytorch": ("torch", "torch"), "tensorflow": ("tensorflow", "tensorflow"),
           "torchvision": ("torchvision", "torchvision"), "torchaudio": ("torchaudio", "torchaudio")}


def _distribution_version(name):
    return _distribution_place(name)[0]


def _distribution_place(name):
    """(version, directory) of an installed distribution; (None, None) when none is found or unreadable.
    importlib.metadata (3.8+), else setuptools' pkg_resources (a Python 3.7 environment)."""
    try:
        from importlib import metadata  # Python 3.8+  # novermin
    except ImportError:
        metadata = None
    try:
        if metadata is None:
            import pkg_resources

            found = pkg_resources.get_distribution(name)
            return found.version, os.path.realpath(found.location)
        found = metadata.distribution(name)
        return found.version, os.path.realpath(str(found.locate_file("")))
    except Exception:  # noqa: BLE001 - not installed, a broken dist-info, no pkg_resources
        return None, None


def _module_path(name):
    import importlib

    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - reported as a missing framework
        return None
    return os.path.realpath(getattr(module, "__file__", "") or "")


def _actual(ctx, key):
    """(version, CUDA, where) of one provided framework in the image."""
    module, distribution = MODULES[key]
    facts = ctx.library_frameworks.get(module) or {}
    version = facts.get("version") or _distribution_version(distribution)
    return version, facts.get("cuda"), _module_path(module) if version else None


def _declared_cuda(ctx, key):
    if key == "pytorch":
        return ctx.expected("torch_cuda")
    if key == "tensorflow":
        return ctx.expected("tensorflow_cuda")
    return None


def _package_problems(packages):
    """(rows, problems) of the distributions base_provides.packages declares."""
    rows, problems = {}, []
    for name in sorted(packages):
        declared = packages[name]
        version, where = _distribution_place(name)
        rows[name] = {"declared": declared, "found": version, "from": where}
        if version is None:
            problems.append("the base image does not hold %s (declared %s in base_provides.packages)"
                            % (name, declared))
        elif not version_matches(declared, version):
            problems.append("the image holds %s %s (%s), base_provides.packages declares %s"
                            % (name, version, where, declared))
    return rows, problems


def _fix(frameworks, packages):
    fields = " and ".join(name for name, problems in (("frameworks:", frameworks),
                                                      ("base_provides.packages", packages)) if problems)
    return " (set %s to what the base image holds, or use a base that holds the declared versions)" % fields


def check_base_frameworks(ctx):
    provided = (ctx.expect.get("expected") or {}).get("base_provides") or {}
    frameworks = provided.get("frameworks") or {}
    interpreter = provided.get("python") or "?"
    own_env = provided.get("envgen_env")
    package_rows, package_problems = _package_problems(provided.get("packages") or {})
    rows, problems = {}, []
    for key in sorted(frameworks):
        declared = frameworks[key]
        version, cuda, where = _actual(ctx, key)
        want_cuda = _declared_cuda(ctx, key)
        rows[key] = {"declared": declared, "found": version, "cuda": cuda, "declared_cuda": want_cuda,
                     "from": where}
        if version is None:
            problems.append("the base image does not hold %s (declared %s in base_provides): it is not importable "
                            "from %s's environment" % (key, declared, interpreter))
        elif not version_matches(declared, version):
            problems.append("the base image holds %s %s, the profile declares %s" % (key, version, declared))
        elif want_cuda and cuda and not version_matches(want_cuda, cuda, 2):
            problems.append("the base image's %s %s is built for CUDA %s, the profile declares CUDA %s"
                            % (key, version, cuda, want_cuda))
        elif want_cuda and not cuda and key in ("pytorch", "tensorflow"):
            problems.append("the base image's %s %s is a CPU build, the profile declares a CUDA %s build"
                            % (key, version, want_cuda))
        elif where and own_env and where.startswith(own_env.rstrip("/") + "/"):
            problems.append("%s %s was imported from %s, not from the base image's environment" % (key, version, where))
    if problems or package_problems:
        raise Fail("base_provides: " + "; ".join(problems + package_problems) + _fix(problems, package_problems),
                   {"frameworks": rows, "packages": package_rows})
    said = ["%s %s%s from the base image (%s)" % (key, row["found"], ", CUDA %s" % row["cuda"] if row["cuda"] else "",
                                                  row["from"]) for key, row in sorted(rows.items())]
    if package_rows:
        said.append("from the base image: " + ", ".join("%s %s" % (name, row["found"])
                                                        for name, row in sorted(package_rows.items())))
    return "; ".join(said), {"frameworks": rows, "packages": package_rows, "python": interpreter}


def checks(expect):
    """The checks of this tier that apply: none unless the profile says the base provides frameworks or other
    distributions."""
    provided = (expect.get("expected") or {}).get("base_provides") or {}
    if not (provided.get("frameworks") or provided.get("packages")):
        return []
    return [("libraries.base", check_base_frameworks)]
