#!/bin/sh
# extras.sh [--constrain] PIP_INSTALL_ARGS...: install profile.packages.pip with --prefix /opt/extras (pip.sh),
# beside the environment in /opt/env; the runtime stage merges the two, so changing an extra leaves the
# environment layer as it is. On a base_provides base the arguments hold -c constraints.base.txt (the base's
# versions; pip.sh names a conflict with them). --constrain (no lock): the environment's own versions (pip list
# of /opt/env) constrain the extras, since pip --prefix would otherwise install another version of an
# environment package into /opt/extras and the runtime stage would copy both. Either way, an extra that is
# also in the environment is refused by name.
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib-pip.sh
. "$here/lib-pip.sh"
mkdir -p "$ENVGEN_EXTRAS"
if [ "${1:-}" = --constrain ]; then
    shift
    "$ENVGEN_ENV/bin/python" -m pip list --format=freeze > "$ENVGEN_WORK/environment.constraints.txt"
    # pip's output is shown as it runs and kept, so that the explanation below fits what pip said
    # (set -e would end the group at a failing pip before its status is written: || keeps it)
    { rc=0; sh "$here/pip.sh" install "$@" -c "$ENVGEN_WORK/environment.constraints.txt" || rc=$?
      echo "$rc" > "$ENVGEN_WORK/extras.rc"; } 2>&1 | tee "$ENVGEN_WORK/extras.log"
    if [ "$(cat "$ENVGEN_WORK/extras.rc")" != 0 ]; then
        if envgen_base_conflict "$ENVGEN_WORK/extras.log" 2>/dev/null; then
            :  # a version the base holds (base_provides): pip.sh named it
        elif grep -q '(constraint)' "$ENVGEN_WORK/extras.log"; then
            echo "envgen: packages.pip cannot be installed beside the environment layer's own versions" \
                "(pip names the package above: the version asked for, and the environment's as '(constraint)');" \
                "pin the environment's version in packages.pip, or drop the extra" >&2
        elif grep -q 'No matching distribution found' "$ENVGEN_WORK/extras.log"; then
            echo "envgen: the package index has no release that a packages.pip line asks for (pip names it" \
                "above): check the name and version (\`envgen check\` names misspelt packages), or the index" \
                "(mirrors.pip_index_url)" >&2
        fi
        exit 1
    fi
else
    sh "$here/pip.sh" install "$@"
fi
for info in "$ENVGEN_EXTRAS"/lib/python*/site-packages/*.dist-info; do
    [ -e "$info" ] || continue
    name=$(basename "$info")
    name=${name%%-*}
    for clash in "$ENVGEN_ENV"/lib/python*/site-packages/"${name}"-*.dist-info; do
        if [ -e "$clash" ]; then
            echo "envgen: extra package ${name} is also in the environment layer ($(basename "$clash"));" \
                "pin it once, in the profile's frameworks or packages" >&2
            exit 1
        fi
    done
done
