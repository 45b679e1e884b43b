"""The names envgen spells in more than one place, stated once: the image labels it writes and reads, the build
arguments its Dockerfiles declare, the smoke tiers, and what it assumes when a fact is unknown. Names only: no
imports, no work."""

from __future__ import annotations

# --- image labels (io.envgen.*) -------------------------------------------------------------------------------
LABEL_PREFIX = "io.envgen."
LABEL_PROFILE = "io.envgen.profile"  # the profile's name
LABEL_PROFILE_HASH = "io.envgen.profile-hash"  # the profile's identity hash
LABEL_CONTENT_HASH = "io.envgen.content-hash"  # the build context's hash (the image tag's)
LABEL_VERSION = "io.envgen.version"  # the envgen that rendered it
LABEL_GPU_REQUIRED = "io.envgen.gpu-required"  # "true" | "false": must the smoke test see a GPU
LABEL_SMOKE = "io.envgen.smoke"  # sealed: the smoke report's status
LABEL_SMOKE_MODE = "io.envgen.smoke-mode"  # sealed: the report's mode
LABEL_SMOKE_TIER = "io.envgen.smoke-tier"  # sealed: what a pass proves (TIERS)
LABEL_SMOKE_TESTED_IMAGE = "io.envgen.smoke-tested-image"  # sealed: the image ID the probe ran in
# on the containers envgen starts for itself (the smoke probe), never on an image: which envgen process owns it
# ("HOST/PID/START": its start time in clock ticks, so that a reused PID is not taken for the owner)
LABEL_OWNER = "io.envgen.owner"
LABEL_FREEZE_SHA256 = "io.envgen.freeze-sha256"  # sealed: sha256 of /etc/envgen/requirements.freeze.txt
# the layers' compression where it is not gzip (`build --compression zstd`): a build asking for the other one does
# not reuse the image (the content tag names the content, not how its layers are compressed)
LABEL_COMPRESSION = "io.envgen.layer-compression"
# what only the seal sets (a rendered Dockerfile empties them, so that no image inherits its base's)
SEALED_LABELS = (LABEL_SMOKE, LABEL_SMOKE_MODE, LABEL_SMOKE_TIER, LABEL_SMOKE_TESTED_IMAGE, LABEL_FREEZE_SHA256)

# --- build arguments ------------------------------------------------------------------------------------------
# Routes (mirrors, proxies): none of them reaches a rendered file or a hash.
ARGS_PROXY = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")  # predefined args: tools read either case
ARGS_PIP = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_NO_INDEX", "ENVGEN_FRAMEWORK_INDEX",
            "PYTORCH_WHEELS")
ARGS_CONDA = ("CONDA_CHANNEL_ALIAS", "CONDA_CHANNEL_MIRRORS")
ARG_APT_MIRROR = "APT_MIRROR"
ARG_MICROMAMBA_URL = "MICROMAMBA_URL"  # mirrors.micromamba_url: where conda profiles fetch micromamba
ARG_PYTORCH_WHEELS = "PYTORCH_WHEELS"  # mirrors.pytorch_wheels: replaces https://download.pytorch.org/whl
ARG_BASE_IMAGE = "BASE_IMAGE"
# the args that route pip: `envgen lock` resolves on the host through the same route
ARGS_PIP_ROUTE = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", *ARGS_PROXY,
                  *(a.lower() for a in ARGS_PROXY))
# what a bake file forwards from the environment
ARGS_FORWARDED = tuple(sorted({ARG_APT_MIRROR, ARG_MICROMAMBA_URL, ARG_PYTORCH_WHEELS, *ARGS_CONDA, *ARGS_PROXY,
                               *(a for a in ARGS_PIP if a != "ENVGEN_FRAMEWORK_INDEX")}))

# --- smoke tiers ----------------------------------------------------------------------------------------------
# what a passing smoke report proves (the probe's ``tier``), weakest first
TIER_LIBRARIES, TIER_GPU, TIER_GPU_ONLY, TIER_CPU = "libraries", "gpu", "gpu-only", "cpu"
TIERS = (TIER_LIBRARIES, TIER_GPU, TIER_GPU_ONLY, TIER_CPU)

# --- containers -----------------------------------------------------------------------------------------------
# Shared memory a container gets (`envgen run --shm-size`, the k8s export's /dev/shm): data loaders'
# worker processes pass batches through it, and Docker's 64 MB default ends in "Bus error".
DEFAULT_SHM_SIZE = "2g"

# --- what is assumed when unknown -----------------------------------------------------------------------------
SOURCE_DATE_EPOCH_DEFAULT = 315532800  # 1980-01-01, the earliest a zip file can say
GLIBC_WHEN_UNKNOWN = "2.39"  # the newest manylinux_2_X tag assumed when the image's glibc is unknown
