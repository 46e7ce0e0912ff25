#!/usr/bin/env bash
# Installs the Debian packages AltGrad needs to build, test and fuzz, and nothing when they are all
# present. Safe to run any number of times; needs root (or sudo) only when something is missing.
set -euo pipefail
"$(dirname "$0")/apt_install.sh" \
  cmake g++ make pkg-config \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libopenblas-openmp-dev \
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev \
  libprotobuf-dev protobuf-compiler \
  clang libclang-rt-dev libomp-dev \
  python3 python3-numpy python3-torch python3-dev python3-pybind11 python3-pytest python3-pandas
