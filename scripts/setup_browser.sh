#!/usr/bin/env bash
# Installs Debian's chromium, which the report's browser test (tests/report/browser_check.py) runs
# headless and offline. Does nothing when it is already there.
set -euo pipefail
if command -v chromium >/dev/null; then
  exit 0
fi
echo "setup: installing chromium (Debian) for the report's browser test" >&2
sudo_cmd=()
if ((EUID != 0)); then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
