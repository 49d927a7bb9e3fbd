#!/bin/sh
# gpu_bundle.sh: fetch, on a Debian 12 machine that reaches Debian's
# package registry and PyPI, everything scripts/gpu_check.sh needs on a
# GPU machine that reaches neither, into one folder (default
# .gpu-bundle/, which git ignores):
#   debs/    libcjson1, libcjson-dev, libcsv3, libcsv-dev (Debian 12's
#            .deb files: gpu_check.sh unpacks them without dpkg when the
#            GPU machine lacks cJSON or libcsv)
#   wheels/  meson and ninja (used only where the GPU machine has no
#            meson >= 0.63 or no ninja)
#   SHA256SUMS
# Usage: scripts/gpu_bundle.sh [DIR]
# Then hand DIR to the GPU machine with the working tree (the device
# tool: carry it) and run scripts/gpu_check.sh there (GPU_BUNDLE=DIR
# when it is not .gpu-bundle).  The bundle is about 2 MB; the device
# tool takes 64 MiB with the working tree.
# Needs: apt-get (download needs no root), python3 with pip.
set -eu

dir=${1:-.gpu-bundle}
debs="libcjson1 libcjson-dev libcsv3 libcsv-dev"
# meson 1.5.2 runs on Python 3.12 (Debian 12's 1.0.1, what CI builds
# with, predates it); ninja's wheel carries a static binary
wheels="meson==1.5.2 ninja==1.11.1.1"

mkdir -p "$dir/debs" "$dir/wheels"
rm -f "$dir"/debs/*.deb "$dir"/wheels/*.whl
# shellcheck disable=SC2086  # word lists
(cd "$dir/debs" && apt-get download $debs)
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
    --platform any --python-version 3.12 --implementation cp \
    -d "$dir/wheels" $wheels
(cd "$dir" && sha256sum debs/*.deb wheels/*.whl > SHA256SUMS)
echo "gpu_bundle: $(du -sh "$dir" | cut -f1) in $dir:"
sed 's/^[0-9a-f]*  /  /' "$dir/SHA256SUMS"
