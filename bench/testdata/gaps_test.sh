#!/usr/bin/env bash
# CTest (bench_gaps): `jp-bench gaps` on two recorded rounds of W3's exits (written
# out of order): each exit after the spawn phase lands in the band of the time since
# the exit before it in its round (a round's first exit and the spawn phase's are
# left out), with the band's count, p50, p90 and max; a line that is not two numbers
# is refused, naming the file and the line. Then both sides of W3 (five children)
# write their exits with --samples, one line each, and `gaps` reads them.
#   gaps_test.sh JP_BENCH TESTDATA JP_FLOOR
set -euo pipefail
bench=$1
data=$2
floor=$3
out=$("$bench" gaps "$data/gaps_round1.txt" "$data/gaps_round2.txt" | tr -s ' ')
fail() { echo "bench_gaps: $1"; echo "$out"; exit 1; }
grep -qx '< 0.3 ms 2 220 220 220' <<<"$out" || fail "the two exits close behind another are not in the first band"
grep -qx '0.3-1 ms 1 200 200 200' <<<"$out" || fail "the exit 0.6 ms after the spawn phase's is not in the second band"
grep -qx '1-3 ms 1 250 250 250' <<<"$out" || fail "the exit 2 ms after the one before is not in the third band"
grep -qx '3-6 ms 1 400 400 400' <<<"$out" || fail "the exit 5 ms after the one before is not in the fourth band"
grep -qx '>= 6 ms 2 600 600 600' <<<"$out" || fail "the exits 8 ms after the one before are not in the last band"
grep -qx 'all 7 250 (p99 600)' <<<"$out" || fail "the whole is not 7 exits, p50 250, p99 600"
bad=${TMPDIR:-/tmp}/jp-bench-gaps-$$.txt
sides=("${TMPDIR:-/tmp}/jp-bench-gaps-$$-floor.txt" "${TMPDIR:-/tmp}/jp-bench-gaps-$$-jp.txt")
trap 'rm -f "$bad" "${sides[@]}"' EXIT
printf '# W3\n100.0 200.0\n100.0 fast\n' >"$bad"
if err=$("$bench" gaps "$data/gaps_round1.txt" "$bad" 2>&1); then
  fail "a file with a line that is not two numbers was summed up"
fi
grep -q "jp-bench-gaps-$$.txt: line 3: expected two numbers" <<<"$err" || fail "the refusal does not name the file and line: $err"
"$floor" W3 --n 5 --samples "${sides[0]}" >/dev/null
"$bench" worker W3 --n 5 --floor "$floor" --samples "${sides[1]}" >/dev/null
for f in "${sides[@]}"; do
  [ "$(grep -cE '^-?[0-9]+\.[0-9] [0-9]+\.[0-9]$' "$f")" = 5 ] || { out=$(cat "$f"); fail "$f does not have one line for each of 5 exits"; }
done
out=$("$bench" gaps "${sides[@]}")
grep -q '^all ' <<<"$out" || fail "the two sides' samples were not summed up"
echo "bench_gaps: exits banded by the time since the exit before, a bad line refused by file and number"
