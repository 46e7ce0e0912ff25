#!/usr/bin/env bash
# Installs the Debian packages AltGrad needs, and nothing when they are all present.
# Safe to run any number of times; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-openmp-dev
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libprotobuf-dev protobuf-compiler
  clang libclang-rt-dev libomp-dev
  python3 python3-numpy python3-torch
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if ((EUID != 0)); then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
