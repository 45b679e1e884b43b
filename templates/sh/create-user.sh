#!/bin/sh
# create-user.sh UID NAME: the image's user (profile `user:`) with its own group, and /workspace owned by it. A uid
# (or gid) the base already has is reused, not made again.
set -eu
uid=$1
name=$2
getent group "$uid" > /dev/null || groupadd --gid "$uid" "$name"
getent passwd "$uid" > /dev/null || useradd --uid "$uid" --gid "$uid" --create-home --shell /bin/bash "$name"
mkdir -p /workspace
chown "$uid:$uid" /workspace
