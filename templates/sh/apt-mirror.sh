#!/bin/sh
# apt-mirror.sh MIRROR APT_DIR [CA_FILE...]: point the apt sources under APT_DIR at MIRROR (mirrors.apt_mirror).
# Used by the Dockerfiles (apt-install.sh) and by `envgen lock` (the apt closure): one substitution for both.
#
# Replaced: the primary archive of Debian and of Ubuntu (security.ubuntu.com serves the same /ubuntu tree, so an
# Ubuntu mirror carries the -security suites) and Debian's security archive, which mirrors keep beside /debian
# as /debian-security. A trailing slash or none, followed by a blank or the end of the line: one-line sources
# ("deb http://archive.ubuntu.com/ubuntu/ jammy main") and deb822 ("URIs: http://deb.debian.org/debian").
# NVIDIA's repository and any other source are left alone.
#
# An https:// mirror on a base with no CA certificates (none of CA_FILE non-empty) is used over http:// (apt
# checks the archive's signatures, not the transport), with a warning; a mirror that matched no source is a
# warning too, not silence.
set -eu
m=${1%/}
apt_dir=$2
shift 2
if [ "${m#https://}" != "$m" ]; then
    ca_found=0
    for ca in "$@"; do
        if [ -s "$ca" ]; then ca_found=1; fi
    done
    if [ "$ca_found" = 0 ]; then
        m="http://${m#https://}"
        echo "envgen: warning: no CA certificates in the base for the https:// apt mirror; using $m" >&2
    fi
fi
find "$apt_dir" \( -name '*.list' -o -name '*.sources' \) -exec sed -i -E \
    -e "s#https?://(archive|security)\.ubuntu\.com/ubuntu/?([[:space:]]|\$)#${m}/\2#g" \
    -e "s#https?://deb\.debian\.org/debian/?([[:space:]]|\$)#${m}/\1#g" \
    -e "s#https?://(deb|security)\.debian\.org/debian-security/?([[:space:]]|\$)#${m}-security/\2#g" {} +
if ! grep -rqsF "$m" "$apt_dir/sources.list" "$apt_dir/sources.list.d"; then
    echo "envgen: warning: mirrors.apt_mirror ($m) matched no apt source (looked for deb.debian.org," \
        "archive.ubuntu.com and security.ubuntu.com under $apt_dir): apt uses the base image sources" >&2
fi
