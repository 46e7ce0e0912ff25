#!/usr/bin/env bash
# Installs Apache ECharts (Apache-2.0), which `altgrad report` inlines into every report page:
# dist/echarts.min.js of the npm package echarts at a pinned version, checked against a pinned
# SHA-256, into data/echarts/ (gitignored; the binary reads it from there, see docs/experiments.md).
# Does nothing when the file is already there with the right checksum.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target="$root/data/echarts/echarts.min.js"
package_version=6.1.0
echarts_sha256=b66b25aeb4df84e33199dc21694014d336d222cbd9deb0e5a7c14bd6aa0d0fd0

if [[ -f "$target" ]] && echo "$echarts_sha256  $target" | sha256sum --check --status; then
  exit 0
fi

echo "setup: installing ECharts (npm echarts@$package_version)" >&2
command -v npm >/dev/null || "$root/scripts/apt_install.sh" npm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "echarts@$package_version" >/dev/null &&
  tar xzf "echarts-$package_version.tgz" package/dist/echarts.min.js package/LICENSE package/NOTICE)
echo "$echarts_sha256  $work/package/dist/echarts.min.js" | sha256sum --check --status ||
  { echo "setup: echarts.min.js does not match its pinned checksum" >&2; exit 1; }
mkdir -p "$root/data/echarts"
cp "$work/package/LICENSE" "$work/package/NOTICE" "$root/data/echarts/"
mv "$work/package/dist/echarts.min.js" "$target"
