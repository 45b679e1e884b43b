#!/bin/sh
# pip.sh ARGS...: the environment's pip (/opt/env/bin/python -m pip ARGS) with envgen's download settings
# (lib.sh: build secrets; lib-pip.sh: mirror build args, wheelhouse, the framework's indexes). `install` gets
# --no-cache-dir where pip's cache is no cache mount (classic builder): the layer keeps no wheel cache.
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib-pip.sh
. "$here/lib-pip.sh"
envgen_secrets
envgen_pip_env
if [ "${1:-}" = install ] && ! envgen_cached /root/.cache/pip; then
    shift
    set -- install --no-cache-dir "$@"
fi
exec "${ENVGEN_PYTHON:-$ENVGEN_ENV/bin/python}" -m pip "$@"
