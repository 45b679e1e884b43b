#!/bin/sh
# srcbuild.sh BUILD_REQUIREMENTS PIP_INSTALL_ARGS...: build a package from its sdist with --no-build-isolation
# (its setup.py imports torch from the environment): BUILD_REQUIREMENTS (one word, blank-separated) go into
# ENVGEN_BUILDTOOLS, which is on the path for the build and removed after it, so it stays out of the image. The
# build's own variables (arch list, MAX_JOBS) come in as the environment.
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
tools=$ENVGEN_BUILDTOOLS
requirements=$1
shift
set -f  # the requirements are words, not patterns
# shellcheck disable=SC2086
sh "$here/pip.sh" install --no-warn-script-location --prefix "$tools" $requirements
set +f
site=$(echo "$tools"/lib/python*/site-packages)
PYTHONPATH="$site" PATH="$tools/bin:$PATH" sh "$here/pip.sh" install --no-warn-script-location "$@"
rm -rf "$tools"
