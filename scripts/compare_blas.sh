#!/usr/bin/env bash
# Which BLAS and kernel is fastest for AltGrad's GEMMs at one thread, and which give the same bits:
# runs bench/blas_compare (one binary, no BLAS linked) on AltGrad's own float GEMM (the kernel a
# training step runs, as built for this machine), on Debian's OpenBLAS (libopenblas0-openmp)
# under every kernel family this CPU can run (OPENBLAS_CORETYPE) and on Debian's BLIS
# (libblis4-openmp, installed here if missing) under its own choice and every sub-configuration this
# CPU can run (BLIS_ARCH_TYPE). Libraries alternate ROUNDS times so that all see the same machine;
# each shape keeps its best time. Prints one row per library and kernel, then one row per shape.
# Usage: scripts/compare_blas.sh [ROUNDS] [BLAS_COMPARE_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
binary=${2:-$root/build-blas/bench/blas_compare}

"$root/scripts/apt_install.sh" libblis4-openmp
if [[ ! -x "$binary" ]]; then
  cmake -S "$root" -B "$root/build-blas" -DALTGRAD_TESTS=OFF >/dev/null
  cmake --build "$root/build-blas" -j2 --target blas_compare >/dev/null
fi

package_library() {  # package_library PACKAGE FILE_NAME -> the file's path in the installed package
  local path
  path=$(dpkg -L "$1" 2>/dev/null | grep "/$2\$" || true)
  [[ -n "$path" ]] || { echo "compare_blas: package $1 has no $2; run scripts/setup.sh" >&2; exit 1; }
  echo "${path%%$'\n'*}"
}
package_version() { dpkg-query -W -f='${Version}' "$1"; }
openblas=$(package_library libopenblas0-openmp libopenblas.so.0)
blis=$(package_library libblis4-openmp libblis.so.4)

flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }

# Each run: label|library|environment. OpenBLAS kernel families by OPENBLAS_CORETYPE; BLIS
# sub-configurations by BLIS_ARCH_TYPE, which BLIS 0.9 reads as its arch_t number (skx = 0,
# haswell = 3, sandybridge = 4, penryn = 5, zen3 = 6, zen2 = 7, zen = 8).
runs=("OpenBLAS auto|$openblas|" "AltGrad own GEMM|altgrad|")
has avx512f avx512bw avx512vl && runs+=("OpenBLAS SkylakeX|$openblas|OPENBLAS_CORETYPE=SkylakeX")
has avx512f avx512bw avx512vl avx512_bf16 && runs+=("OpenBLAS Cooperlake|$openblas|OPENBLAS_CORETYPE=Cooperlake")
has avx2 fma && runs+=("OpenBLAS Haswell|$openblas|OPENBLAS_CORETYPE=Haswell" "OpenBLAS Zen|$openblas|OPENBLAS_CORETYPE=Zen")
has avx && runs+=("OpenBLAS Sandybridge|$openblas|OPENBLAS_CORETYPE=Sandybridge")
runs+=("OpenBLAS Nehalem|$openblas|OPENBLAS_CORETYPE=Nehalem" "OpenBLAS Prescott|$openblas|OPENBLAS_CORETYPE=Prescott")
runs+=("BLIS auto|$blis|")
has avx512f avx512dq avx512bw avx512vl && runs+=("BLIS skx|$blis|BLIS_ARCH_TYPE=0")
has avx2 fma && runs+=("BLIS haswell|$blis|BLIS_ARCH_TYPE=3" "BLIS zen3|$blis|BLIS_ARCH_TYPE=6" "BLIS zen2|$blis|BLIS_ARCH_TYPE=7" "BLIS zen|$blis|BLIS_ARCH_TYPE=8")
has avx && runs+=("BLIS sandybridge|$blis|BLIS_ARCH_TYPE=4")
runs+=("BLIS penryn|$blis|BLIS_ARCH_TYPE=5")

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((round = 1; round <= rounds; round++)); do
  for i in "${!runs[@]}"; do
    IFS='|' read -r label library setting <<<"${runs[$i]}"
    echo "compare_blas: round $round/$rounds: $label" >&2
    echo "label $label" >"$logs/$i.$round"
    env -u OPENBLAS_CORETYPE -u OPENBLAS_BLOCK_FACTOR -u BLIS_ARCH_TYPE OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
      $setting "$binary" "$library" >>"$logs/$i.$round"
  done
done

cpu=$(lscpu | awk -F: '/^Model name/ { m = $2 } /^CPU family/ { f = $2 } /^Model:/ { n = $2 }
  END { gsub(/^ +/, "", m); gsub(/ /, "", f); gsub(/ /, "", n); printf "%s (family %s, model %s)", m, f, n }')
echo "AltGrad's GEMM shapes, single-threaded row-major SGEMM, best of $rounds rounds × 5 batches per shape"
echo "CPU: $cpu, $(nproc) cores; vector flags:$(for f in avx2 fma avx512f avx512bw avx512vl avx512_bf16; do has $f && printf ' %s' $f; done)"
echo "OpenBLAS: $openblas (libopenblas0-openmp $(package_version libopenblas0-openmp))"
echo "BLIS:     $blis (libblis4-openmp $(package_version libblis4-openmp))"
[[ -n "${OPENBLAS_CORETYPE:-}" ]] &&
  echo "note: this shell sets OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE; the auto rows run without it (the library's own pick)"
echo "load average (1, 5, 15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# Bits are compared with OpenBLAS SkylakeX where this CPU runs it, else with OpenBLAS's own choice.
reference=0
for i in "${!runs[@]}"; do [[ "${runs[$i]}" == "OpenBLAS SkylakeX|"* ]] && reference=$i; done

awk -v runs="${#runs[@]}" -v rounds="$rounds" -v ref="$reference" '
FNR == 1 { n = split(FILENAME, path, "/"); split(path[n], id, "."); run = id[1]; round = id[2] }
$1 == "label" { label[run] = substr($0, 7) }
$1 == "kernel" {
  reported[run] = "?"
  if (match($0, /(core|arch|kernel)=[^ ]+/)) { reported[run] = substr($0, RSTART, RLENGTH); sub(/^[^=]*=/, "", reported[run]) }
}
$1 == "shape" {
  key = $2 " " $3
  if (!(key in flops)) { shapes[++count] = key; model[key] = $2; calls[key] = $8; flops[key] = 2 * $5 * $6 * $7
    what[key] = sprintf("%-7s %-11s %s %4d %4d %4d %4d", $2, $3, $4, $5, $6, $7, $8) }
  if (!((run, key) in best) || $10 < best[run, key]) best[run, key] = $10
  if ((run, key) in bits && bits[run, key] != $11) unstable[run] = 1
  bits[run, key] = $11
  step[run, round, $2] += $8 * $10
}
function total(run, which,   s, ms) {  # one step of model `which`, from the best time of each shape
  ms = 0
  for (s = 1; s <= count; s++) if (model[shapes[s]] == which) ms += calls[shapes[s]] * best[run, shapes[s]] / 1000
  return ms
}
function spread(run,   r, lo, hi, v) {  # largest over smallest default-step time across rounds
  lo = 1e30; hi = 0
  for (r = 1; r <= rounds; r++) { v = step[run, r, "default"]; if (v < lo) lo = v; if (v > hi) hi = v }
  return 100 * (hi / lo - 1)
}
END {
  printf "%3s  %-20s %-11s %11s %7s %11s %7s %8s %10s %6s\n", "#", "library, kernel asked", "reported",
    "default ms", "speed", "10.7M ms", "speed", "1024^3", "same bits", "noise"
  printf "%3s  %-20s %-11s %11s %7s %11s %7s %8s %10s %6s\n", "", "", "", "(1 step)", "vs #0", "(1 step)",
    "vs #0", "GFLOP/s", "as #" ref, "(%)"
  for (r = 0; r < runs; r++) {
    same = 0; for (s = 1; s <= count; s++) same += bits[r, shapes[s]] == bits[ref, shapes[s]]
    printf "%3d  %-20s %-11s %11.1f %7.2f %11.1f %7.2f %8.1f %5d/%-4d %6.1f%s\n", r, label[r], reported[r],
      total(r, "default"), total(0, "default") / total(r, "default"), total(r, "10.7M"),
      total(0, "10.7M") / total(r, "10.7M"), flops["square 1024^3"] / best[r, "square 1024^3"] / 1000,
      same, count, spread(r), unstable[r] ? "  BITS CHANGED BETWEEN PROCESSES" : ""
  }
  printf "\nGFLOP/s per shape; * = bits differ from #%d (%s). calls = per training step.\n", ref, label[ref]
  printf "%-7s %-11s %s %4s %4s %4s %4s", "model", "gemm", "op", "m", "n", "k", "call"
  for (r = 0; r < runs; r++) printf " %7s", "#" r
  printf "\n"
  for (s = 1; s <= count; s++) {
    key = shapes[s]; printf "%s", what[key]
    for (r = 0; r < runs; r++)
      printf " %6.1f%s", flops[key] / best[r, key] / 1000, bits[r, key] == bits[ref, key] ? " " : "*"
    printf "\n"
  }
}' "$logs"/*.*
