#!/bin/sh
# create-user.sh UID NAME: the image's user (profile `user:`) with its own group, and /workspace owned by it. A uid
# (or gid) the base already has is reused, not made again.
set -eu
uid=$1
name=$2
getent group "$uid" > /dev/null || groupadd --gid "$uid" "$name"
getent passwd "$uid" > /dev/null || useradd --uid "$uid" --gid "$uid" --create-home --shell /bin/bash "$name"
# A user the base already has may lack its home (a root file system imported without /home): CuPy and Triton keep
# their caches there and fail on import with "Permission denied: '/home/NAME'" (seen on the H200, 2026-12-02).
home=$(getent passwd "$uid" | cut -d: -f6)
if [ -n "$home" ] && [ ! -d "$home" ]; then
    mkdir -p "$home"
    chown "$uid:$(getent passwd "$uid" | cut -d: -f4)" "$home"
fi
mkdir -p /workspace
chown "$uid:$uid" /workspace
