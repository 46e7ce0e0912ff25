#!/usr/bin/env bash
# Installs Debian's chromium, which the report's browser test (tests/report/browser_check.py) runs
# headless and offline. Does nothing when it is already there.
set -euo pipefail
"$(dirname "$0")/apt_install.sh" chromium
