#!/bin/sh
# Install every Debian package tbench needs to build, run and test.
# Idempotent: when everything is present it changes nothing and does not
# touch the network; otherwise it runs apt-get update, then installs only
# what is missing.  Needs root (or sudo).
set -eu

PKGS="gcc libc6-dev pkg-config meson ninja-build git
libcjson-dev libcsv-dev libcmocka-dev libopenblas-dev liblapacke-dev
gnuplot-nox python3 python3-jsonschema python3-numpy python3-scipy valgrind
libbenchmark-tools libblis-dev clang libclang-rt-14-dev llvm
slurmctld slurmd slurm-client munge python3-mpmath"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
        grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "setup: all packages present"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
fi
echo "setup: installing$missing"
$SUDO apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is wanted
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y \
    --no-install-recommends $missing
