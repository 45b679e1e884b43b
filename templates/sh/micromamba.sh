#!/bin/sh
# micromamba.sh URL SHA256 [DEST]: fetch micromamba's static binary from URL (the build args MICROMAMBA_URL and
# MICROMAMBA_SHA256: a mirror overrides both), through the proxy's CA bundle when the build has it, and install it
# as DEST (default /usr/local/bin/micromamba) only if its sha256 is SHA256.
set -eu
here=$(dirname "$0")
dest=${3:-/usr/local/bin/micromamba}
sh "$here/with-secrets.sh" curl -fsSL --retry 3 -o "$dest.part" "$1"
if ! echo "$2  $dest.part" | sha256sum -c - > /dev/null; then
    rm -f "$dest.part"
    echo "envgen: micromamba from $1 does not have the sha256 $2 (MICROMAMBA_SHA256)" >&2
    exit 1
fi
chmod 0755 "$dest.part"
mv "$dest.part" "$dest"
