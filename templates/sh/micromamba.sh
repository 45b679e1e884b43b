#!/bin/sh
# micromamba.sh URL SHA256: fetch micromamba's static binary from URL (the build args MICROMAMBA_URL and
# MICROMAMBA_SHA256: a mirror overrides both), through the proxy's CA bundle when the build has it, and install it
# as /usr/local/bin/micromamba only if its sha256 is SHA256.
set -eu
here=$(dirname "$0")
sh "$here/with-secrets.sh" curl -fsSL --retry 3 -o /usr/local/bin/micromamba "$1"
echo "$2  /usr/local/bin/micromamba" | sha256sum -c -
chmod 0755 /usr/local/bin/micromamba
