#!/bin/sh
# strip-tool.sh DEST: GNU strip, just installed by apt in the strip stage, with the shared libraries it needs beyond
# the C library (libbfd, libsframe, ...) copied to DEST/bin and DEST/lib. Installing steps bind DEST from this stage
# (BuildKit) or copy it into a build stage that is never shipped, and run DEST/bin/strip through strip.sh: binutils
# never reaches the image. The strip stage is built on the base the installing stage starts from (beside the
# installing stage's own packages, not after them), so the C library there is the one the copied tool was built
# against or, where those packages upgrade it, a newer one of the same distribution, which runs it.
set -eu
dest=${1:?strip-tool.sh DEST}
tool=$(readlink -f "$(command -v strip)")
mkdir -p "$dest/bin" "$dest/lib"
cp "$tool" "$dest/bin/strip"
ldd "$tool" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    case ${lib##*/} in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;  # the C library: the image's own
        *) cp -L "$lib" "$dest/lib/" ;;
    esac
done
LD_LIBRARY_PATH="$dest/lib" "$dest/bin/strip" --version | head -n 1
