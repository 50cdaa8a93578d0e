#!/usr/bin/env bash
# CTest (bench_compare): `jp-bench compare` on two recorded runs. W2's time and W4's
# rate got worse past the noise (a rate is worse when it falls), W3 and W8 better,
# W1 moved less than 5%, W6's 0 stayed 0, W9 is new; and a file that is not a run
# is refused, naming it. `jp-bench pairs` over four alternating pairs (the last one
# reversed) names what is past the noise in the medians and in three pairs of four;
# three pairs name nothing.
#   compare_test.sh JP_BENCH TESTDATA
set -euo pipefail
bench=$1
data=$2
out=$("$bench" compare "$data/before.json" "$data/now.json")
fail() { echo "bench_compare: $1"; echo "$out"; exit 1; }
grep -Eq '^W2 +wall_ms +1\.64× +1\.80× +\+9\.8% +WORSE$' <<<"$out" || fail "W2 is not reported worse"
grep -Eq '^W4 2GiB +mb_per_s +0\.94× +0\.85× +-9\.6% +WORSE$' <<<"$out" || fail "W4's fall is not reported worse"
grep -Eq '^W3 +p50_us .* better$' <<<"$out" || fail "W3 is not reported better"
grep -Eq '^W8 +subagents_per_s +2000 /s +2200 /s +\+10\.0% +better$' <<<"$out" || fail "W8 (no floor) is not compared by its median"
grep -Eq '^W1 +mean_us +1\.26× +1\.20× +-4\.8% *$' <<<"$out" || fail "W1 is not within the noise"
grep -Eq '^W6 +left .* \+0\.0% *$' <<<"$out" || fail "W6's 0 is not the same"
grep -Eq '^W9 +fetch_p50_ratio .* new$' <<<"$out" || fail "W9 is not new"
last=$(tail -n 1 <<<"$out")
[ "$last" = "7 figures against $data/before.json: 2 worse by more than 5% (W2 wall_ms +9.8%, W4 2GiB mb_per_s -9.6%), 2 better, 2 within 5%, 1 new" ] ||
  fail "the summary line is not: $last"
echo '{"not": "a run"}' >"${TMPDIR:-/tmp}/jp-bench-compare-$$.json"
trap 'rm -f "${TMPDIR:-/tmp}/jp-bench-compare-$$.json"' EXIT
if err=$("$bench" compare "$data/before.json" "${TMPDIR:-/tmp}/jp-bench-compare-$$.json" 2>&1); then
  fail "a file that is not a run was compared"
fi
grep -q "jp-bench-compare-$$.json: expected an array of rows" <<<"$err" || fail "the refusal does not name the file: $err"
out=$("$bench" pairs "$data/before.json" "$data/now.json" "$data/before.json" "$data/now.json" \
  "$data/before.json" "$data/now.json" "$data/now.json" "$data/before.json")
grep -Eq '^W2 +wall_ms +1\.64× +1\.80× +\+9\.8% +1 / 3 of 4  \(jp-actors 164 -> 180 ms\)$' <<<"$out" || fail "W2 is not worse in 3 of 4 pairs"
grep -Eq '^W8 +subagents_per_s +2000 /s +2200 /s +\+10\.0% +3 / 1 of 4$' <<<"$out" || fail "W8 is not better in 3 of 4 pairs (and, with no floor, has no second medians)"
grep -Eq '^W1 +mean_us +1\.26× +1\.20× +-4\.8% +0 / 1 of 4  \(jp-actors 390\.6 -> 372 µs\)$' <<<"$out" || fail "W1 is not within the noise in 3 pairs"
last=$(tail -n 1 <<<"$out")
[ "$last" = "over 4 pairs: 2 worse (W2 wall_ms +9.8%, W4 2GiB mb_per_s -9.6%), 2 better (W3 p50_us -17.6%, W8 subagents_per_s +10.0%) (past 5% in the medians and in 3 pairs of 4, of 4 at least)" ] ||
  fail "the pairs' summary line is not: $last"
# Three pairs are too few to name a figure.
last=$("$bench" pairs "$data/before.json" "$data/now.json" "$data/before.json" "$data/now.json" \
  "$data/now.json" "$data/before.json" | tail -n 1)
[ "$last" = "over 3 pairs: 0 worse, 0 better (past 5% in the medians and in 3 pairs of 4, of 4 at least)" ] ||
  fail "three pairs named a figure: $last"
if err=$("$bench" pairs "$data/before.json" 2>&1); then
  fail "an odd number of files was paired"
fi
grep -q "an odd number" <<<"$err" || fail "the refusal of an odd number does not say so: $err"
echo "bench_compare: worse, better, within the noise, from 0 and new figures told apart; pairs summed up"
