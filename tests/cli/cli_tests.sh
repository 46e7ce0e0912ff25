#!/usr/bin/env bash
# End-to-end checks of the command line: output shapes, known values, and error handling.
# Usage: cli_tests.sh PATH_TO_ALTGRAD
set -uo pipefail
altgrad=$1
source "$(dirname "$0")/checks.sh"

succeeded() {  # succeeded NAME STATUS: the command (or pipeline, under pipefail) before it exited 0
  check "$1 exit status" 0 "$2"
}

# formats: one row per named format, with the published maxima.
table=$("$altgrad" formats); succeeded "formats" $?
check "formats row count" 15 "$(wc -l <<<"$table")"
contains "e4m3 row" "e4m3       4  3    7 fn               448" "$table"
contains "e5m2 row" "e5m2       5  2   15 ieee           57344" "$table"
json=$("$altgrad" formats --json); succeeded "formats --json" $?
check "formats --json e4m3fnuz max" 240 "$(python3 -c 'import json,sys; d={r["name"]:r for r in json.load(sys.stdin)}; print(int(d["e4m3fnuz"]["max_finite"]))' <<<"$json")"
check "formats --json e8m0fnu has no subnormals" None "$(python3 -c 'import json,sys; d={r["name"]:r for r in json.load(sys.stdin)}; print(d["e8m0fnu"]["min_subnormal"])' <<<"$json")"

# formats --codes: every code, value, step to the next code toward +Inf, grid spacing S(value).
codes=$("$altgrad" formats --codes e4m3); succeeded "formats --codes e4m3" $?
check "e4m3 code count" 256 "$(wc -l <<<"$codes")"
check "e4m3 smallest subnormal" "0x01 0.001953125 0.001953125 0.001953125" "$(sed -n 2p <<<"$codes")"
check "e4m3 max finite: no finite successor, the top binade's spacing" "0x7e 448 nan 32" "$(sed -n 127p <<<"$codes")"
check "e4m3 NaN code" "0x7f nan nan nan" "$(sed -n 128p <<<"$codes")"
check "e4m3 -min subnormal steps to zero" "0x81 -0.001953125 0.001953125 0.001953125" "$(sed -n 130p <<<"$codes")"
check "e4m3 -128: a step of 8 up, spacing 16 away from zero" "0xf0 -128 8 16" "$(grep '^0xf0 ' <<<"$codes")"
out=$("$altgrad" formats --codes e5m2); succeeded "formats --codes e5m2" $?
check "e5m2 max finite steps to Inf" "0x7b 57344 nan 8192" "$(sed -n 124p <<<"$out")"
out=$("$altgrad" formats --codes e2m1); succeeded "formats --codes e2m1" $?
check "e2m1 codes" "0x0 0 0.5 0.5|0x1 0.5 0.5 0.5|0x2 1 0.5 0.5|0x3 1.5 0.5 0.5|0x4 2 1 1|0x5 3 1 1|0x6 4 2 2|0x7 6 nan 2" \
  "$(head -8 <<<"$out" | paste -sd'|')"
# Both columns against brute force over the sorted finite values, for formats of every shape.
for f in e4m3 e5m2 e3m4 e2m5 e1m6 e7m0 e8m0fnu "e5m2,subnormals=off" bf16; do
  mismatches=$("$altgrad" formats --codes "$f" | /usr/bin/python3 -c '
import bisect, math, sys
rows = [line.split() for line in sys.stdin]
values = sorted({float(r[1]) for r in rows if math.isfinite(float(r[1]))})
magnitudes = sorted({abs(v) for v in values})
bad = 0
for code, value, up, spacing in rows:
    v = float(value)
    if not math.isfinite(v):
        want_up = want_s = math.nan
    else:
        i = bisect.bisect_right(values, v)
        want_up = values[i] - v if i < len(values) else math.nan
        j = bisect.bisect_right(magnitudes, abs(v))
        if j < len(magnitudes):
            want_s = magnitudes[j] - abs(v)
        else:  # max finite: the step of the top binade, or twice the one below when max is alone in it
            edge = 2.0 ** math.floor(math.log2(abs(v)))
            below = magnitudes[j - 2]
            want_s = abs(v) - below if below >= edge else 2 * (edge - below)
    for got, want in ((float(up), want_up), (float(spacing), want_s)):
        if not (got == want or (math.isnan(got) and math.isnan(want))):
            bad += 1
print(bad)')
  check "formats --codes $f: both columns equal brute force" 0 "$mismatches"
done

# quantize: one line per input, specials by name.
out=$(echo "1 0.1 464 465 -0 nan inf -inf 0.0009765625 1e-3" | "$altgrad" quantize --format e4m3 | paste -sd'|'); succeeded "quantize --format e4m3" $?
check "e4m3 nearest-even" "0x38 1|0x1d 0.1015625|0x7e 448|0x7e 448|0x80 -0|0x7f nan|0x7f nan|0x7f nan|0x00 0|0x01 0.001953125" "$out"
out=$(echo "60000 61440 -1e9 inf" | "$altgrad" quantize --format e5m2 --no-saturate | paste -sd'|'); succeeded "quantize --format e5m2 --no-saturate" $?
check "e5m2 overflow to Inf" "0x7b 57344|0x7c inf|0xfc -inf|0x7c inf" "$out"
out=$(echo "1.1 -1.1 1.9" | "$altgrad" quantize --format e2m1 --rounding zero | paste -sd'|'); succeeded "quantize --format e2m1 --rounding zero" $?
check "e2m1 toward zero" "0x2 1|0xa -1|0x3 1.5" "$out"
out=$(echo "1.1 -1.1" | "$altgrad" quantize --format e2m1 --rounding up | paste -sd'|'); succeeded "quantize --format e2m1 --rounding up" $?
check "e2m1 toward +inf" "0x3 1.5|0xa -1" "$out"
out=$(echo "0.001" | "$altgrad" quantize --format e4m3 --no-subnormals); succeeded "quantize --format e4m3 --no-subnormals" $?
check "e4m3 without subnormals flushes" "0x00 0" "$out"
out=$(echo "1000" | "$altgrad" quantize --format e4m3 --scale 0.25); succeeded "quantize --format e4m3 --scale 0.25" $?
check "scale multiplies before and divides after (250 rounds to 256)" "0x78 1024" "$out"
out=$(echo "3 5 6" | "$altgrad" quantize --format e7m0 | paste -sd'|'); succeeded "quantize --format e7m0" $?
check "e7m0 ties to the even code (3 -> 2, 6 -> 8)" "0x40 2|0x41 4|0x42 8" "$out"
sr1=$(seq 1 200 | sed 's/$/.3/' | "$altgrad" quantize --format e2m1 --rounding stochastic --seed 7 | md5sum); succeeded "stochastic quantize 1" $?
sr2=$(seq 1 200 | sed 's/$/.3/' | "$altgrad" quantize --format e2m1 --rounding stochastic --seed 7 | md5sum); succeeded "stochastic quantize 2" $?
sr3=$(seq 1 200 | sed 's/$/.3/' | "$altgrad" quantize --format e2m1 --rounding stochastic --seed 8 | md5sum); succeeded "stochastic quantize 3" $?
check "stochastic rounding is reproducible" "$sr1" "$sr2"
[[ "$sr1" != "$sr3" ]] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL seeds change stochastic rounding"; }

# Errors: exit status 2 and a message that names the problem.
err=$(echo "1 2 abc 4" | "$altgrad" quantize --format e4m3 2>&1 >/dev/null); status=$?
check "bad token exit status" 2 "$status"
contains "bad token names its position" "token 3 ('abc')" "$err"
# Found by fuzz/quantize_tokens_fuzzer.cpp: text after a number too large for float, and "+-".
err=$(echo "1e999abc" | "$altgrad" quantize --format e4m3 2>&1 >/dev/null); status=$?
check "text after an overflowing number exit status" 2 "$status"
contains "text after an overflowing number is named" "token 1 ('1e999abc')" "$err"
err=$(echo "+-5" | "$altgrad" quantize --format e4m3 2>&1 >/dev/null); status=$?
check "plus then minus exit status" 2 "$status"
err=$(echo 1 | "$altgrad" quantize --format e9m9 2>&1); status=$?
check "unknown format exit status" 2 "$status"
contains "unknown format lists valid forms" "valid forms" "$err"
err=$("$altgrad" formats --codes "e4m3,bias=x" 2>&1); status=$?
check "bad option exit status" 2 "$status"
contains "bad option is named" "bad value 'x' for option 'bias'" "$err"
err=$(echo 1 | "$altgrad" quantize --format e4m3 --rounding sideways 2>&1); status=$?
check "unknown rounding exit status" 2 "$status"
contains "unknown rounding is named" "sideways" "$err"
err=$(echo 1 | "$altgrad" quantize --format e4m3 --scale -1 2>&1); status=$?
check "bad scale exit status" 2 "$status"

# bench: one row per case at one thread, each with its memcpy baseline, ratio and target verdict.
bench=$("$altgrad" bench quantize --values 100000 --repeats 1); succeeded "bench quantize" $?
check "bench rows at one thread" 5 "$(awk '$1 ~ /^e[0-9]m[0-9]$/ && $3 == 1' <<<"$bench" | wc -l)"
check "bench MX rows at one thread" 2 "$(awk '$1 == "mx" && $4 == 1' <<<"$bench" | wc -l)"
# Each row's ratio is its rate over memcpy's and its verdict compares that ratio with the target
# (within the rounding of the printed rates).
check "bench rows: ratio and verdict follow from the rates" "ok" "$(python3 -c '
import re, sys
rows = [l for l in sys.stdin if re.match(r"e\dm\d ", l)]
pattern = r"(\S+) (.+?) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+) +(\d+)% +>=(\d+)% (met|NOT MET)$"
bad = [l for l in rows if not re.match(pattern, l.strip())]
for l in rows:
    m = re.match(pattern, l.strip())
    if not m:
        continue
    rate, memcpy, ratio, target = float(m[4]), float(m[6]), int(m[7]), int(m[8])
    low = 100 * (rate - 5e-4) / (memcpy + 5e-4) - 0.5
    high = 100 * (rate + 5e-4) / max(memcpy - 5e-4, 1e-9) + 0.5
    if not low <= ratio <= high or (m[9] == "met") != (ratio >= target):
        bad.append(l)
print("ok" if rows and not bad else "bad rows: %r" % bad)' <<<"$bench")"
contains "bench ratio column" "vs memcpy" "$bench"

# The BLAS kernel (docs/determinism.md): the process runs the kernel its choice asked for (--version
# names both, and says "not loaded" where they differ), a pin runs its level's representative on any
# CPU of that level, the user's OPENBLAS_CORETYPE wins over a pin, and a bad pin names the variable.
unset_blas="env -u OPENBLAS_CORETYPE -u ALTGRAD_BLAS_CHOICE -u ALTGRAD_BLAS_KERNEL"
out=$($unset_blas "$altgrad" --version); succeeded "--version" $?
contains "--version names the CPU" "cpu   " "$out"
gemm_kernel=$(sed -n 's/^gemm  own float GEMM, \(avx512\|avx2\|portable\) kernel$/\1/p' <<<"$out")
check "--version names the own GEMM's kernel" 1 "$(grep -c . <<<"$gemm_kernel")"
check "--version: the automatic choice is the kernel that runs" "" "$(grep -o 'not loaded' <<<"$out")"
out=$($unset_blas ALTGRAD_BLAS_KERNEL=sse3 "$altgrad" --version)
contains "a sse3 pin runs Prescott" "kernel Prescott (pinned by ALTGRAD_BLAS_KERNEL=sse3;" "$out"
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  out=$($unset_blas ALTGRAD_BLAS_KERNEL=avx2 "$altgrad" --version)
  contains "an avx2 pin runs Haswell" "kernel Haswell (pinned by ALTGRAD_BLAS_KERNEL=avx2;" "$out"
fi
out=$($unset_blas OPENBLAS_CORETYPE=Prescott ALTGRAD_BLAS_KERNEL=avx2 "$altgrad" --version)
contains "the user's OPENBLAS_CORETYPE wins over a pin" "kernel Prescott (set by OPENBLAS_CORETYPE=Prescott)" "$out"
err=$($unset_blas ALTGRAD_BLAS_KERNEL=avx3 "$altgrad" --version 2>&1); check "a bad pin exit status" 2 $?
contains "a bad pin names the variable and the levels" "ALTGRAD_BLAS_KERNEL=avx3: not a kernel level (auto, avx512, avx2, avx, sse3)" "$err"

# train / eval / sample on a small generated corpus with the tiny preset.
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 -c "import random; r=random.Random(1); print(' '.join(r.choice(['law','court','article','shall','apply']) for _ in range(8000)))" > "$scratch/corpus.txt"
train_out=$("$altgrad" train "$root/configs/tiny.toml" --set "data=$scratch/corpus.txt" --out "$scratch/run" --dump-batch 3 2>/dev/null); status=$?
check "train exit status" 0 "$status"
contains "train names its run directory" "run directory: $scratch/run" "$train_out"
check "train reports the last val loss it logged" \
  "final val loss: $(python3 -c 'import json,sys; print("%.4f" % [json.loads(l) for l in open(sys.argv[1])][-1]["val_loss"])' "$scratch/run/metrics.jsonl")" \
  "$(grep '^final val loss:' <<<"$train_out")"
check "metrics.jsonl has one line per step" 20 "$(wc -l < "$scratch/run/metrics.jsonl")"
$unset_blas ALTGRAD_BLAS_KERNEL=sse3 "$altgrad" train "$root/configs/tiny.toml" --set "data=$scratch/corpus.txt" --set max_iters=1 \
  --out "$scratch/pinned" >/dev/null 2>&1
check "the start event records the kernels a pinned run ran and why" "Prescott ALTGRAD_BLAS_KERNEL $gemm_kernel" \
  "$(python3 -c 'import json,sys; e=json.loads(open(sys.argv[1]).readline()); print(e["blas_kernel"], e["blas_kernel_source"], e["gemm_kernel"])' "$scratch/pinned/events.jsonl")"
check "train prints the end event's weights + optimizer state bytes" \
  "$(python3 -c 'import json,sys; m=[json.loads(l) for l in open(sys.argv[1])][-1]["memory"]; print(m["weight_bytes"], m["optimizer_state_bytes"], m["total_bytes"], m["total_bytes"] == 3 * m["weight_bytes"])' "$scratch/run/events.jsonl")" \
  "$(sed -n 's/^memory: .* weights \([0-9]*\) B + state \([0-9]*\) B .* = \([0-9]*\) B$/\1 \2 \3 True/p' <<<"$train_out")"
# --dump-batch: each row is a window of the corpus, its targets the same window one byte on.
check "the dumped batch holds corpus windows and their next bytes" "1 4 32" "$(python3 -c '
import json, struct, sys
data = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8:8 + n])
def tensor(name):
    begin, end = header[name]["data_offsets"]
    return [int(v) for v in struct.unpack("<%df" % ((end - begin) // 4), data[8 + n + begin:8 + n + end])], header[name]["shape"]
(x, shape), (y, _) = tensor("tokens"), tensor("targets")
corpus = open(sys.argv[2], "rb").read()
T = shape[-1]
rows = [(x[i:i + T], y[i:i + T]) for i in range(0, len(x), T)]
ok = all(ys[:-1] == xs[1:] and bytes(xs + ys[-1:]) in corpus for xs, ys in rows)
print(*shape) if ok else print("rows that are not windows of the corpus")' "$scratch/run/batches/step_3.safetensors" "$scratch/corpus.txt")"
err=$("$altgrad" train "$root/configs/tiny.toml" --set "data=$scratch/corpus.txt" --out "$scratch/bad" --dump-batch 21 2>&1); status=$?
check "--dump-batch past max_iters exit status" 2 "$status"
contains "--dump-batch names the allowed steps" "steps run from 1 to max_iters (20)" "$err"
err=$("$altgrad" train "$root/configs/tiny.toml" --set "data=$scratch/corpus.txt" --out "$scratch/run" 2>&1); status=$?
check "a second run into the same directory is refused" 2 "$status"
contains "refusal suggests --resume" "--resume" "$err"

# device = "cuda" never trains on the CPU in its place: a build without the CUDA engine says so, and
# one with it on a machine without a GPU names CUDA's reason; no run directory is left behind.
err=$("$altgrad" train "$root/configs/tiny.toml" --set "data=$scratch/corpus.txt" --set device=cuda --out "$scratch/gpu" 2>&1); status=$?
check "device = cuda is refused without a GPU" 2 "$status"
contains "the refusal names the device" 'device "cuda"' "$err"
check "no run directory for a refused device" "absent" "$([[ -e "$scratch/gpu/metrics.jsonl" ]] && echo present || echo absent)"
eval_out=$("$altgrad" eval --checkpoint "$scratch/run" --text "$scratch/corpus.txt" --max-windows 4); succeeded "eval" $?
check "eval names its recipe" "recipe fp32 (the checkpoint's)" "$(head -1 <<<"$eval_out")"
check "eval prints the window count" "windows 4" "$(sed -n 2p <<<"$eval_out")"
[[ "$(tail -1 <<<"$eval_out")" =~ ^loss\ [0-9.]+$ ]] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL eval last line: $eval_out"; }
s1=$("$altgrad" sample --checkpoint "$scratch/run" --prompt "law " --tokens 40 --seed 3); succeeded "sample" $?
s2=$("$altgrad" sample --checkpoint "$scratch/run" --prompt "law " --tokens 40 --seed 3); succeeded "sample again" $?
check "sampling with a seed is reproducible" "$s1" "$s2"
[[ "$s1" == "law "?* ]] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL sample continues its prompt: $s1"; }
# Quantized training: the recipe goes into the run, eval applies it unless told otherwise.
{ cat "$root/configs/tiny.toml"; printf '\n[quant]\npreset = "fp8-hybrid"\n'; } > "$scratch/fp8.toml"
"$altgrad" train "$scratch/fp8.toml" --set "data=$scratch/corpus.txt" --out "$scratch/fp8" >/dev/null 2>&1; status=$?
check "quantized train exit status" 0 "$status"
check "the run holds its resolved recipe" fp8-hybrid "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['preset'])" "$scratch/fp8/recipe.json")"
as_trained=$("$altgrad" eval --checkpoint "$scratch/fp8" --text "$scratch/corpus.txt" --max-windows 4); succeeded "eval fp8" $?
unquantized=$("$altgrad" eval --checkpoint "$scratch/fp8" --text "$scratch/corpus.txt" --max-windows 4 --recipe fp32)
succeeded "eval fp8 --recipe fp32" $?
check "eval applies the checkpoint's recipe" "recipe fp8-hybrid (the checkpoint's)" "$(head -1 <<<"$as_trained")"
check "eval --recipe fp32 names it" "recipe fp32" "$(head -1 <<<"$unquantized")"
[[ "$(tail -1 <<<"$as_trained")" != "$(tail -1 <<<"$unquantized")" ]] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL eval with and without the recipe agree: $as_trained"; }
# Another run's recipe: the FP32 model with the fp8 run's points, which is the preset with current
# scaling in place of the fp8 run's delayed history, so the two losses agree to the bit.
foreign=$("$altgrad" eval --checkpoint "$scratch/run" --text "$scratch/corpus.txt" --max-windows 4 --recipe "$scratch/fp8")
succeeded "eval --recipe RUN_DIR" $?
contains "eval names the run whose recipe it borrowed" "recipe fp8-hybrid (the recipe of $scratch/fp8/checkpoints/" "$(head -1 <<<"$foreign")"
as_preset=$("$altgrad" eval --checkpoint "$scratch/run" --text "$scratch/corpus.txt" --max-windows 4 --recipe fp8-hybrid)
check "another run's recipe quantizes as its preset does" "$(tail -1 <<<"$as_preset")" "$(tail -1 <<<"$foreign")"
[[ "$(tail -1 <<<"$foreign")" != "$(tail -1 <<<"$eval_out")" ]] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL eval --recipe RUN_DIR changes nothing: $foreign"; }
# The saved delayed scales are what eval uses: shrink every one 10^4 times and the loss must move.
cp -r "$(ls -d "$scratch"/fp8/checkpoints/step_* | tail -1)" "$scratch/fp8-rescaled"
python3 - "$scratch/fp8-rescaled/quant.safetensors" <<'PY'
import json, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
(length,) = struct.unpack("<Q", data[:8])
for name, entry in json.loads(data[8:8 + length]).items():
    if name.endswith(".scale"):
        at = 8 + length + entry["data_offsets"][0]
        struct.pack_into("<f", data, at, struct.unpack_from("<f", data, at)[0] * 1e-4)
open(sys.argv[1], "wb").write(data)
PY
rescaled=$("$altgrad" eval --checkpoint "$scratch/fp8-rescaled" --text "$scratch/corpus.txt" --max-windows 4)
[[ "$(tail -1 <<<"$as_trained")" != "$(tail -1 <<<"$rescaled")" ]] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL eval ignores the saved scales: $(tail -1 <<<"$rescaled")"; }
# Code-only weights: the checkpoint holds E4M3 codes; export writes F32 that equal the codes decoded
# here, independently (E4M3: 1 sign, 4 exponent bits of bias 7, 3 mantissa bits, 0x7F/0xFF NaN).
{ cat "$scratch/fp8.toml"; printf '\n'; } | sed 's/^\[quant\]$/optimizer = "gridwalk"\nmaster_weights = false\n[quant]/' > "$scratch/codes.toml"
"$altgrad" train "$scratch/codes.toml" --set "data=$scratch/corpus.txt" --out "$scratch/codes" >/dev/null 2>&1
succeeded "code-only train" $?
"$altgrad" export --checkpoint "$scratch/codes" --out "$scratch/exported" >/dev/null; succeeded "export" $?
check "exported F32 weights are the stored codes decoded" "8 code tensors, all equal" "$(python3 - "$(ls -d "$scratch"/codes/checkpoints/step_* | tail -1)/model.safetensors" "$scratch/exported/model.safetensors" <<'PY'
import json, struct, sys
def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        raw = data[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]]
        out[name] = list(raw) if e["dtype"] == "U8" else list(struct.unpack("<%df" % (len(raw) // 4), raw))
    return out, meta
def e4m3(code):
    sign, exponent, mantissa = code >> 7, (code >> 3) & 15, code & 7
    value = mantissa / 8 * 2.0 ** -6 if exponent == 0 else (1 + mantissa / 8) * 2.0 ** (exponent - 7)
    return -value if sign else value
stored, meta = read(sys.argv[1])
exported, _ = read(sys.argv[2])
names = [k[:-len(".codes")] for k in stored if k.endswith(".codes")]
equal = all(meta[n + ".format"] == "e4m3" and n not in stored and
            [e4m3(c) / stored[n + ".scale"][0] for c in stored[n + ".codes"]] == exported[n] for n in names)
equal = equal and exported["lm_head.weight"] == exported["transformer.wte.weight"]
print(len(names), "code tensors,", "all equal" if equal else "NOT equal")
PY
)"
out=$("$altgrad" train "$root/configs/tiny.toml" --set "data=$scratch/corpus.txt" --out "$scratch/nan" --inject-nan "h.0.mlp.c_fc:act@3" 2>/dev/null); status=$?
check "an injected NaN stops the run" 1 "$status"
contains "the stop reason names the point" "non-finite loss at step 3; first non-finite value at quantization point h.0.mlp.c_fc:act" "$out"
check "steps count from 1: the NaN of step 3 leaves steps 1 and 2 in metrics" "1 2" "$(python3 -c "import json,sys; print(*[json.loads(l)['step'] for l in open(sys.argv[1])])" "$scratch/nan/metrics.jsonl")"
check "the stop event has the step of --inject-nan" 3 "$(python3 -c "import json,sys; print([e for e in map(json.loads, open(sys.argv[1])) if e['event'] == 'stop'][0]['step'])" "$scratch/nan/events.jsonl")"
"$altgrad" train "$root/configs/tiny.toml" --set "data=$scratch/corpus.txt" --out "$scratch/nan0" --inject-nan "h.0.mlp.c_fc:act@0" >/dev/null 2>&1; status=$?
check "--inject-nan refuses step 0" 2 "$status"
printf '[quant]\npreset = "fp9"\n' > "$scratch/bad-recipe.toml"
err=$("$altgrad" train "$scratch/bad-recipe.toml" --out "$scratch/bad" 2>&1); status=$?
check "bad recipe exit status" 2 "$status"
contains "bad recipe names file, line and value" "bad-recipe.toml:2: quant: unknown preset \"fp9\"" "$err"
tiny=(--steps 2 --set n_layer=1 --set n_embd=32 --set n_head=2 --set batch_size=2 --set block_size=16)
bench=$("$altgrad" bench train --recipe fp8-hybrid "${tiny[@]}")
succeeded "bench train --recipe" $?
contains "bench train --recipe prints the overhead" "overhead of fp8-hybrid over fp32" "$bench"
# The values the step quantized: every block linear's X (N × in), W (out × in) and dY (N × out),
# N = 2·16 tokens (fp8 leaves the LM head in FP32), once under per-tensor scaling and once per
# reduction axis under MX.
linears=$(( (32*32 + 96*32 + 32*96) + (32*32 + 32*32 + 32*32) + (32*32 + 128*32 + 32*128) + (32*128 + 32*128 + 32*32) ))
contains "bench train --recipe counts the quantized values" "values quantized per step: $linears;" "$bench"
bench=$("$altgrad" bench train --recipe mx8 "${tiny[@]}")
contains "bench train --recipe mx8 counts both axes' copies" "values quantized per step: $((2 * linears));" "$bench"
err=$("$altgrad" bench train --rounds 0 2>&1); status=$?
check "bench train --rounds 0 exit status" 2 "$status"
contains "bench train --rounds 0 names the option" "--rounds" "$err"

err=$("$altgrad" train --set n_head=5 --out "$scratch/bad" 2>&1); status=$?
check "bad config exit status" 2 "$status"
contains "bad config names the key and rule" "n_embd must be a multiple of n_head" "$err"
err=$("$altgrad" train --set learning_rat=1 --out "$scratch/bad" 2>&1); status=$?
check "unknown key exit status" 2 "$status"
contains "unknown key is named" "unknown key 'learning_rat'" "$err"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
