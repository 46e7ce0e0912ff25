#!/usr/bin/env bash
# Installs Debian's Slurm (controller, node daemon, client commands) and MUNGE, for the one-node
# test cluster of tests/slurm/cluster.sh; nothing when they are all present. Needs root (or sudo)
# only when something is missing. The packages' own services are never started: the test starts
# its daemons itself, with its own configuration and key, and stops them.
set -euo pipefail
"$(dirname "$0")/apt_install.sh" slurmctld slurmd slurm-client munge
