#!/bin/sh
# pip.sh ARGS...: the environment's pip (/opt/env/bin/python -m pip ARGS) with envgen's download settings
# (lib.sh: build secrets; lib-pip.sh: mirror build args, wheelhouse, the framework's indexes). `install` gets
# --no-cache-dir where pip's cache is no cache mount (classic builder): the layer keeps no wheel cache. On a
# base_provides base (constraints.base.txt copied in), a failed install that conflicts with the base's versions
# gets one line naming it.
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
python=${ENVGEN_PYTHON:-$ENVGEN_ENV/bin/python}
if [ "${1:-}" = install ] && [ -f "$ENVGEN_BASE_CONSTRAINTS" ]; then
    # a base_provides base (its versions are the install's -c): pip's output is shown as it runs and kept, so
    # that a packages.pip line needing another version of what the base holds is named (envgen_base_conflict)
    log="$ENVGEN_WORK/pip.log"
    { rc=0; "$python" -m pip "$@" || rc=$?; echo "$rc" > "$log.rc"; } 2>&1 | tee "$log"
    rc=$(cat "$log.rc")
    if [ "$rc" != 0 ]; then
        envgen_base_conflict "$log" || true
    fi
    exit "$rc"
fi
exec "$python" -m pip "$@"
