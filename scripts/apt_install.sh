#!/usr/bin/env bash
# Installs the named Debian packages that are not installed yet, and nothing when all are.
# Needs root (or sudo) only when something is missing. Usage: scripts/apt_install.sh PACKAGE...
set -euo pipefail

missing=()
for p in "$@"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if ((EUID != 0)); then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
