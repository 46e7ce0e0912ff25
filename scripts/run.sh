#!/usr/bin/env bash
# The main job: install what is missing, build, then show the formats and a short quantization demo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" build -DALTGRAD_TESTS=OFF
altgrad="$root/build/altgrad"

"$altgrad" formats
demo_values="0.1 1 3.14159 300 500 0.001 0.00001 -2.5 nan inf"
for format in e4m3 e5m2 e2m1 e7m0; do
  echo
  echo "quantize --format $format: $demo_values"
  echo "$demo_values" | "$altgrad" quantize --format "$format" | paste -d' ' <(tr ' ' '\n' <<<"$demo_values") -
done
