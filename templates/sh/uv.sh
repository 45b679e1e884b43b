#!/bin/sh
# uv.sh ARGS...: uv (bind-mounted at ENVGEN_UV_DIR) with envgen's download settings. uv reads no pip.conf: pip's
# settings (lib-pip.sh's envgen_pip_env) become uv's variables; `pip install` gets the wheelhouse and ENVGEN_FIND_LINKS as
# --find-links, and --no-index when PIP_NO_INDEX is set. ENVGEN_CACHE_ID (build arg) picks a sub-directory
# of the uv cache mount: a fresh id is a cold cache (bench). Where every wheel is a file of the build (--no-index, no
# remote find-links: an offline wheelhouse), the cache is a directory of the image's own file system instead, gone
# when uv is done (below). After `pip install`, uv's uv_cache.json files go (below).
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib-pip.sh
. "$here/lib-pip.sh"
envgen_secrets
envgen_pip_env  # pip's settings (lib-pip.sh), read back below as uv's: one statement of the rule for both
UV_CACHE_DIR="/root/.cache/uv/${ENVGEN_CACHE_ID:-shared}"
UV_LINK_MODE=copy
UV_PYTHON_DOWNLOADS=never
UV_NO_CONFIG=1
UV_INDEX_STRATEGY=unsafe-best-match
export UV_CACHE_DIR UV_LINK_MODE UV_PYTHON_DOWNLOADS UV_NO_CONFIG UV_INDEX_STRATEGY
if [ -n "${PIP_INDEX_URL:-}" ]; then export UV_DEFAULT_INDEX="$PIP_INDEX_URL"; fi
if [ -n "${PIP_TRUSTED_HOST:-}" ]; then export UV_INSECURE_HOST="$PIP_TRUSTED_HOST"; fi
if [ -n "${PIP_EXTRA_INDEX_URL:-}" ]; then export UV_EXTRA_INDEX_URL="$PIP_EXTRA_INDEX_URL"; fi
if [ "${1:-} ${2:-}" = "pip install" ]; then
    offline=${PIP_NO_INDEX:+yes}
    set -f  # the links are words, not patterns
    for link in $PIP_FIND_LINKS; do
        case $link in file://*) ;; *://*) offline="" ;; esac
        set -- "$@" --find-links "$link"
    done
    set +f
    if [ -n "${PIP_NO_INDEX:-}" ]; then set -- "$@" --no-index; fi
    if [ -n "$offline" ]; then
        # Nothing to download, so nothing for the cache mount to keep: uv unpacks each wheel into a directory on the
        # same file system as the environment and hard-links the files in. From the cache mount (another mount)
        # uv must copy, writing every byte twice (cpu-smoke's 2.5 GB: "Installed" 2.4-5.7 s copying, 0.2 s linking;
        # docs/benchmarks.md). Removing the directory removes the second names only.
        UV_CACHE_DIR="${TMPDIR:-/tmp}/envgen-uv-cache"
        UV_LINK_MODE=hardlink
        trap 'rm -rf "$UV_CACHE_DIR"' EXIT
    fi
    "${ENVGEN_UV:-$ENVGEN_UV_DIR/uv}" "$@"
    # uv writes <name>.dist-info/uv_cache.json for a wheel it installs from a local file (the wheelhouse): that file's
    # ctime, the moment the build context reached the builder, so the layer changed with every clean build (issue
    # #45). Nothing in the image reads it (uv is not in the image; pip ignores it): it goes, with its RECORD line.
    # dist-info directories sit at site-packages' top: a glob finds them without walking the environment.
    for stamp in "$ENVGEN_ENV"/lib/python*/site-packages/*.dist-info/uv_cache.json; do
        [ -f "$stamp" ] || continue
        info=${stamp%/uv_cache.json}
        grep -vF "${info##*/}/uv_cache.json," "$info/RECORD" >"$info/RECORD.envgen" || true
        cat "$info/RECORD.envgen" >"$info/RECORD"
        rm -f "$info/RECORD.envgen" "$stamp"
    done
    exit 0
fi
exec "${ENVGEN_UV:-$ENVGEN_UV_DIR/uv}" "$@"
