#!/bin/sh
# conda-env.sh FILE: micromamba creates the environment (ENVGEN_ENV) from FILE (environment.yml, or the lock's explicit list
# environment.lock.txt), in the working directory. Mirrors and the proxy CA go into a build-time rc file that
# is not left behind: CONDA_CHANNEL_ALIAS, and CONDA_CHANNEL_MIRRORS (space-separated NAME=URL pairs: channel
# NAME is fetched from URL) rewritten into a copy of environment.yml. environment.yml's pip section gets pip's
# settings (lib-pip.sh). Caches that are no cache mounts (classic builder) are emptied.
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=lib-pip.sh
. "$here/lib-pip.sh"
envgen_secrets
envgen_pip_env
if ! envgen_cached /root/.cache/pip; then
    PIP_NO_CACHE_DIR=1
    export PIP_NO_CACHE_DIR
fi
file=$1
: > condarc
if [ -n "${CONDA_CHANNEL_ALIAS:-}" ]; then echo "channel_alias: ${CONDA_CHANNEL_ALIAS}" >> condarc; fi
if [ -n "${SSL_CERT_FILE:-}" ]; then echo "ssl_verify: ${SSL_CERT_FILE}" >> condarc; fi
case "$file" in
    *.yml)
        cp "$file" environment.build.yml
        for pair in ${CONDA_CHANNEL_MIRRORS:-}; do
            awk -v from="  - ${pair%%=*}" -v to="  - ${pair#*=}" '$0 == from { print to; next } { print }' \
                environment.build.yml > environment.tmp
            mv environment.tmp environment.build.yml
        done
        file=environment.build.yml
        ;;
esac
micromamba create --yes --prefix /opt/env --rc-file condarc --file "$file"  # /opt/env: layout.ENV
if ! envgen_cached "$ENVGEN_MICROMAMBA/pkgs"; then micromamba clean --all --yes; fi
rm -f condarc environment.build.yml
