#!/usr/bin/env bash
# Installs Debian's Slurm (controller, node daemon, client commands) and MUNGE, for the one-node
# test cluster of tests/slurm/cluster.sh; nothing when they are all present. Needs root (or sudo)
# only when something is missing. The packages' own services are never started: the test starts
# its daemons itself, with its own configuration and key, and stops them.
set -euo pipefail

packages=(slurmctld slurmd slurm-client munge)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup_slurm: installing ${missing[*]}" >&2
sudo_cmd=()
if ((EUID != 0)); then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
# No init system runs here; keep the packages' maintainer scripts from trying to start services.
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
