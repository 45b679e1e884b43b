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

# envgen_base_conflict LOG: LOG is pip's output of an install that failed. Where what pip could not meet is a
# constraint of constraints.base.txt (ENVGEN_BASE_CONSTRAINTS: the versions a base_provides base holds), one line
# on stderr naming the distribution, the base's version and what asked for another (pip's "depends on" line);
# status 0 then, else 1.
envgen_base_conflict() {
    [ -f "$ENVGEN_BASE_CONSTRAINTS" ] || return 1
    found=1
    while IFS= read -r pin; do
        case $pin in '' | '#'*) continue ;; esac
        grep -qiF "(constraint) $pin" "$1" || continue
        name=${pin%%==*}
        why=$(grep -iE -m1 "depends on ${name}([^A-Za-z0-9_.-]|$)" "$1" | sed 's/^ *//')
        echo "envgen: a packages.pip line needs another version of $name than the base holds (base_provides:" \
            "$name ${pin#*==})${why:+: $why}; pin a release of that line's package" \
            "whose requirements accept $name ${pin#*==}, or build on a base that holds the version it needs and" \
            "write that version in the profile's base_provides" >&2
        found=0
    done < "$ENVGEN_BASE_CONSTRAINTS"
    return $found
}
