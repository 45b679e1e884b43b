"""Where envgen puts things, stated once: the paths of an image envgen builds, the build context's folders and
the build secrets' ids. Python reads them here; the Dockerfiles get them through the template context
(``layout``), the build scripts through ``envgen/sh/layout.sh`` (written from ``shell_assignments``), the smoke
probe through its launcher's arguments. Names only: no imports, no work."""

from __future__ import annotations

# --- in the image ---------------------------------------------------------------------------------------------
ENV = "/opt/env"  # the Python environment every installer makes (a venv, or micromamba's prefix)
EXTRAS = "/opt/extras"  # build stages only: packages.pip installed with --prefix, merged into ENV at runtime
BUILDTOOLS = "/opt/buildtools"  # build stages only: a source build's build requirements
MICROMAMBA_ROOT = "/opt/micromamba"  # build stages only: micromamba's root prefix (its package cache)
UV_DIR = "/opt/uv"  # the uv stage's unpacked uv, bind-mounted where it runs
OWN = "/opt/envgen"  # envgen's own files in the image
SCRIPTS = f"{OWN}/sh"  # where a RUN finds the build scripts (bound or copied from the context)
PROBE = f"{OWN}/probe"  # the smoke probe: the folder envgen/smoke/probe/ as shipped
PROBE_ENTRY = "envgen_probe.py"  # its one entry point, in that folder (first argument `preflight`: the preflight)
PROBE_MAIN = f"{PROBE}/{PROBE_ENTRY}"
ETC = "/etc/envgen"  # what an image says about itself
PROFILE_JSON = f"{ETC}/profile.json"  # the resolved profile and the probe's expected facts
SEALED_REPORT = f"{ETC}/smoke-report.json"  # the smoke report a validated image carries
SEALED_FREEZE = f"{ETC}/requirements.freeze.txt"  # pip freeze of the environment, sealed beside it
SMOKE_COMMAND = "/usr/local/bin/envgen-smoke"  # the probe's launcher
SMOKE_REPORT = "/tmp/envgen-smoke.json"  # where a smoke run has the probe write its report, read back from stdout
ENTRYPOINT = "/usr/local/bin/envgen-entrypoint"  # the image's entrypoint: the preflight, then the command
PREFLIGHT_SWITCH = "ENVGEN_PREFLIGHT"  # 0/off skips the preflight, warn reports without refusing
WORK = "/tmp/envgen"  # a build stage's working directory
WORKSPACE = "/workspace"  # the image's WORKDIR, owned by its user: `envgen run` and the exports mount the project here
WHEELS = "/tmp/wheels"  # the wheelhouse, bound or copied in
SECRETS = "/run/secrets"  # where BuildKit mounts the build secrets

# --- in the build context -------------------------------------------------------------------------------------
CONTEXT_SCRIPTS = "envgen/sh"  # the build scripts (templates/sh/)
CONTEXT_WHEELS = "wheels"  # the wheelhouse
# the versions a base_provides base holds (plan: ImagePlan.base_constraints), pip's -c in every resolving install;
# copied into WORK beside the requirements files
BASE_CONSTRAINTS = "constraints.base.txt"

# --- build secrets (`docker build --secret id=...`): read during a RUN, in no layer ----------------------------
SECRET_CA_BUNDLE = "ca_bundle"  # the proxy's CA bundle
SECRET_PIP_CONF = "pip_conf"  # a pip.conf
SECRET_NETRC = "netrc"  # the logins written in mirror URLs (pip, uv: NETRC), never a build arg
SECRET_IDS = (SECRET_CA_BUNDLE, SECRET_PIP_CONF, SECRET_NETRC)


# what the build scripts read (templates/sh/layout.sh, sourced by lib.sh): a variable set beforehand wins (tests)
SHELL_NAMES = {"ENVGEN_ENV": ENV, "ENVGEN_EXTRAS": EXTRAS, "ENVGEN_BUILDTOOLS": BUILDTOOLS, "ENVGEN_WORK": WORK,
               "ENVGEN_WHEELS": WHEELS, "ENVGEN_UV_DIR": UV_DIR, "ENVGEN_MICROMAMBA": MICROMAMBA_ROOT,
               "ENVGEN_SECRETS": SECRETS, "ENVGEN_BASE_CONSTRAINTS": f"{WORK}/{BASE_CONSTRAINTS}",
               "ENVGEN_SECRET_CA": SECRET_CA_BUNDLE, "ENVGEN_SECRET_PIP_CONF": SECRET_PIP_CONF,
               "ENVGEN_SECRET_NETRC": SECRET_NETRC}


def shell_assignments() -> str:
    """templates/sh/layout.sh as it must read: the names above as POSIX sh defaults."""
    head = ["# shellcheck shell=sh",
            "# Where envgen puts things, for the build scripts: written from envgen/layout.py (a unit test",
            "# compares the two). Sourced by lib.sh; a variable set beforehand wins."]
    return "\n".join([*head, *(f': "${{{name}:={value}}}"' for name, value in SHELL_NAMES.items())]) + "\n"
