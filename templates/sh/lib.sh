# shellcheck shell=sh
# Sourced by envgen's build scripts (never run by itself). POSIX sh: a base without bash runs it too.
# What every download in a RUN needs, stated once: the build secrets (the proxy's CA bundle, pip.conf) and
# whether a cache directory outlives the RUN. pip's mirror settings: lib-pip.sh.

# the image's paths and the build secrets' ids (ENVGEN_SECRETS: where BuildKit mounts the secrets), from envgen/layout.py
# shellcheck source=layout.sh disable=SC2154  # here: set by the script that sources this file
. "$here/layout.sh"
ENVGEN_MOUNTINFO=${ENVGEN_MOUNTINFO:-/proc/self/mountinfo}

# envgen_secrets: point downloaders at the CA bundle, pip at pip.conf and pip/uv at the mirrors' logins (netrc),
# when the build was given them
# (BuildKit secret mounts: read during the RUN, in no layer; the classic builder has none).
envgen_secrets() {
    if [ -f "$ENVGEN_SECRETS/$ENVGEN_SECRET_CA" ]; then
        PIP_CERT="$ENVGEN_SECRETS/$ENVGEN_SECRET_CA"
        SSL_CERT_FILE="$PIP_CERT"
        REQUESTS_CA_BUNDLE="$PIP_CERT"
        CURL_CA_BUNDLE="$PIP_CERT"
        export PIP_CERT SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE
    fi
    if [ -f "$ENVGEN_SECRETS/$ENVGEN_SECRET_PIP_CONF" ]; then
        PIP_CONFIG_FILE="$ENVGEN_SECRETS/$ENVGEN_SECRET_PIP_CONF"
        export PIP_CONFIG_FILE
    fi
    if [ -f "$ENVGEN_SECRETS/$ENVGEN_SECRET_NETRC" ]; then  # the mirrors' logins: pip and uv read NETRC
        NETRC="$ENVGEN_SECRETS/$ENVGEN_SECRET_NETRC"
        export NETRC
    fi
}

# envgen_cached DIR: true when DIR is a mount point (a BuildKit cache mount), so what is downloaded into it
# stays out of the layer; false under the classic builder, where the script empties DIR itself.
envgen_cached() {
    [ -r "$ENVGEN_MOUNTINFO" ] || return 1
    awk -v dir="$1" '$5 == dir { found = 1 } END { exit !found }' "$ENVGEN_MOUNTINFO"
}
