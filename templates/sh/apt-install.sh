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
# A builder's lock file at the lists cache's root survives `apt-get update`, which deletes the files it does not
# know there: buildah <= 1.28 (podman 4.3) keeps a sharing=locked mount's lock file in the mount and, when the file
# is gone, never unlocks the cache, so the next build that mounts it waits forever (buildah issues 4342, 4349).
lock=/var/lib/apt/lists/buildah-cache-lockfile
relock=
if [ -e "$lock" ]; then relock=1; fi
apt-get update
if [ -n "$relock" ]; then touch "$lock"; fi
apt-get install -y --no-install-recommends "$@"
rm -f /etc/apt/apt.conf.d/99envgen-ca
if [ -d /tmp/envgen-apt ]; then rm -rf /etc/apt && mv /tmp/envgen-apt /etc/apt; fi
# what records the time of the install in its contents: apt's and dpkg's logs, ldconfig's auxiliary cache (two
# clean builds on Docker 26 with rewrite-timestamp differed in these four files only, seen 2026-12-01)
rm -f /var/log/dpkg.log /var/log/alternatives.log /var/log/apt/history.log /var/log/apt/term.log \
    /var/log/apt/eipp.log.xz /var/cache/ldconfig/aux-cache
if ! envgen_cached /var/cache/apt; then apt-get clean; fi
if ! envgen_cached /var/lib/apt/lists; then rm -rf /var/lib/apt/lists/*; fi
