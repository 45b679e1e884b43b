#!/bin/sh
# apt-install.sh PACKAGE...: apt-get install --no-install-recommends in one RUN. The build arg APT_MIRROR
# replaces the distribution's archives (apt-mirror.sh) for this RUN only: /etc/apt is restored afterwards, so
# the mirror is not left in the image; the proxy's CA bundle (a build secret) reaches apt the same way. Where
# apt's cache and lists are no cache mounts (classic builder), they are emptied before the layer is written.
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
ca="$ENVGEN_SECRETS/ca_bundle"  # the secret layout.SECRET_CA_BUNDLE
if [ -n "${APT_MIRROR:-}" ]; then
    cp -a /etc/apt /tmp/envgen-apt
    sh "$here/apt-mirror.sh" "$APT_MIRROR" /etc/apt /etc/ssl/certs/ca-certificates.crt "$ca"
fi
if [ -f "$ca" ]; then
    echo "Acquire::https::CAInfo \"$ca\";" > /etc/apt/apt.conf.d/99envgen-ca
fi
apt-get update
apt-get install -y --no-install-recommends "$@"
rm -f /etc/apt/apt.conf.d/99envgen-ca
if [ -d /tmp/envgen-apt ]; then rm -rf /etc/apt && mv /tmp/envgen-apt /etc/apt; fi
if ! envgen_cached /var/cache/apt; then apt-get clean; fi
if ! envgen_cached /var/lib/apt/lists; then rm -rf /var/lib/apt/lists/*; fi
