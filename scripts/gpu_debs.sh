#!/usr/bin/env bash
# Downloads the Debian packages that a GPU machine without network may lack (toml++ with its shared
# library, OpenBLAS's OpenMP build and its development files) into one folder, for
# `scripts/gpu_check.sh DIR` there.
# Run it on a Debian or Ubuntu machine with network. Usage: scripts/gpu_debs.sh [DIR]
# (default build-debs/, which git ignores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build-debs}
mkdir -p "$dir"
cd "$dir"
apt-get download libtomlplusplus-dev libtomlplusplus3 libopenblas-openmp-dev libopenblas0-openmp libopenblas-dev libopenblas0
ls "$dir"/*.deb
