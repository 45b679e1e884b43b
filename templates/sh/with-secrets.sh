#!/bin/sh
# with-secrets.sh COMMAND [ARG...]: run COMMAND with downloaders pointed at the proxy's CA bundle and pip at
# pip.conf, when the build was given them as secrets (lib.sh's envgen_secrets).
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
envgen_secrets
exec "$@"
