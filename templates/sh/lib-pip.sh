# shellcheck shell=sh
# Sourced by the build scripts that run pip (pip.sh, conda-env.sh for environment.yml's pip section); never run by
# itself. POSIX sh.

# envgen_pip_env: pip's settings for one install. A mirror build arg declared but left empty is unset (pip
# rejects an empty index URL); the wheelhouse (ENVGEN_WHEELS) and ENVGEN_FIND_LINKS are find-links; the
# framework's wheel indexes (ENVGEN_INDEX_URLS) are added to the user's extra indexes unless the build arg
# ENVGEN_FRAMEWORK_INDEX=0 (set when the wheelhouse holds the framework's local-version wheels: no retries
# against a host that a closed network cannot reach).
envgen_pip_env() {
    if [ -z "${PIP_INDEX_URL:-}" ]; then unset PIP_INDEX_URL; fi
    if [ -z "${PIP_EXTRA_INDEX_URL:-}" ]; then unset PIP_EXTRA_INDEX_URL; fi
    if [ -z "${PIP_TRUSTED_HOST:-}" ]; then unset PIP_TRUSTED_HOST; fi
    if [ -z "${PIP_NO_INDEX:-}" ]; then unset PIP_NO_INDEX; fi
    PIP_DISABLE_PIP_VERSION_CHECK=1
    PIP_NO_INPUT=1
    PIP_FIND_LINKS="$ENVGEN_WHEELS${ENVGEN_FIND_LINKS:+ $ENVGEN_FIND_LINKS}"
    export PIP_DISABLE_PIP_VERSION_CHECK PIP_NO_INPUT PIP_FIND_LINKS
    if [ -n "${ENVGEN_INDEX_URLS:-}" ] && [ "${ENVGEN_FRAMEWORK_INDEX:-1}" = 1 ]; then
        PIP_EXTRA_INDEX_URL="${PIP_EXTRA_INDEX_URL:+$PIP_EXTRA_INDEX_URL }$ENVGEN_INDEX_URLS"
        export PIP_EXTRA_INDEX_URL
    fi
}
