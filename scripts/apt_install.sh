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
# A package the configured sources do not have is named before apt-get's own error. On Ubuntu most
# of these packages (toml++, CLI11, PyTorch, Slurm) are in the universe component, which Ubuntu's
# own images enable; a trimmed sources list may not.
unavailable=()
for p in "${missing[@]}"; do
  candidate=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
  [[ -n "$candidate" && "$candidate" != "(none)" ]] || unavailable+=("$p")
done
if ((${#unavailable[@]} > 0)); then
  echo "setup: no apt source offers ${unavailable[*]}" >&2
  if grep -qi '^ID=ubuntu' /etc/os-release 2>/dev/null; then
    echo "setup: on Ubuntu, enable the universe component (add-apt-repository universe) and run this again" >&2
  fi
  exit 1
fi
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
