#!/usr/bin/env bash
# Installs the default training corpus: the texts of the 727 licenses in the SPDX License List,
# from the npm package spdx-license-list at a pinned version (CC0-1.0), joined in identifier order
# into data/legal-corpus.txt. Both the package and the corpus are checked against pinned SHA-256
# sums, so every machine trains on the same bytes. Does nothing when the corpus is already there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus="$root/data/legal-corpus.txt"
package_version=6.12.0
package_json_sha256=a2af313af682077111b673033e763108d33e6af9b02e7f08b380f544180bcfd6
corpus_sha256=e3a8c06e52c6f407b88e43fba0f30fa44e16e3acd10aa0f59513c142f40d996a

if [[ -f "$corpus" ]] && echo "$corpus_sha256  $corpus" | sha256sum --check --status; then
  exit 0
fi

echo "setup: installing the default corpus (npm spdx-license-list@$package_version)" >&2
command -v npm >/dev/null || "$root/scripts/apt_install.sh" npm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "spdx-license-list@$package_version" >/dev/null && tar xzf "spdx-license-list-$package_version.tgz")
echo "$package_json_sha256  $work/package/spdx-full.json" | sha256sum --check --status ||
  { echo "setup: spdx-full.json does not match its pinned checksum" >&2; exit 1; }

mkdir -p "$root/data"
python3 - "$work/package/spdx-full.json" "$work/corpus.txt" <<'PY'
import json, sys
licenses = json.load(open(sys.argv[1], encoding="utf-8"))
texts = [licenses[key]["licenseText"].strip() + "\n" for key in sorted(licenses)]
open(sys.argv[2], "wb").write("\n".join(texts).encode("utf-8"))
PY
echo "$corpus_sha256  $work/corpus.txt" | sha256sum --check --status ||
  { echo "setup: the assembled corpus does not match its pinned checksum" >&2; exit 1; }
mv "$work/corpus.txt" "$corpus"
