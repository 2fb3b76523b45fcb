#!/usr/bin/env bash
# Issue 16's proof on one H200 (16 CPUs): gpuenv run watches jobs, names what
# held them back, and --tune makes the next run faster.
#  (a) an input-bound ResNet-50 loop (CPU augmentation, DataLoader defaults):
#      `gpuenv report --json` says input-bound; `gpuenv run --tune` on the
#      unchanged script reaches >= 3x its images/s.
#  (b) the fp32 GPT-2 loop (gpt_train.py): watched vs --no-watch, alternating
#      runs, watching costs <= 1 % of tokens/s; its verdict is busy.
#  (c) issue 24: the same loop, one plain gpuenv run then five `gpuenv run
#      --tune`: every tuned run >= 3x the untuned images/s, and the wall time
#      of the profile's choice no worse than untuned; the report shows each run's speed.
#  (d) issue 24: a Trainer run with CPU work per sample: untuned, then --tune
#      twice: samples/s and wall time.
# PARTS="a b c d" chooses the parts (default: all).
# Usage: GPUENV=./build/gpuenv tests/gpu/feedback.sh   (prints PASS/FAIL and a JSON summary;
# the summary also goes to $OUT/feedback.json when $OUT is set)
set -u
GPUENV=$(realpath "${GPUENV:-./build/gpuenv}")
HERE=$(cd "$(dirname "$0")" && pwd)
PAIRS=${PAIRS:-3}
GPT_STEPS=${GPT_STEPS:-120}
export GPUENV_CACHE_ROOT=${GPUENV_CACHE_ROOT:-$(mktemp -d)}  # a fresh store: no verdict before the first run
WORK=$(mktemp -d)
cd "$HERE" || exit 2  # the same command in the same directory each time: one fingerprint
fails=0
result() { if [ "$1" = 1 ]; then echo "PASS: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); fi; }
field() { python3 -c "import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(d$1)"; }

PARTS=${PARTS:-a b c d}
has() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
ips1=0; ips2=0; speedup=0; workers2=0; verdict_a=none; verdict_a2=none; util_a=-1; overhead=-1; verdict_b=none
watched=(); unwatched=(); loop_json='null'; trainer_json='null'

if has a; then
# ---- (a) input-bound ResNet-50, then --tune ----
"$GPUENV" run -- python3 resnet_input_bound.py > "$WORK/a1.out" 2> "$WORK/a1.err"
a1_rc=$?
"$GPUENV" report --json > "$WORK/report_a.json"
verdict_a=$(python3 -c "import json; print(json.load(open('$WORK/report_a.json'))['jobs'][0]['verdict']['name'])")
util_a=$(python3 -c "import json; print(round(json.load(open('$WORK/report_a.json'))['jobs'][0]['verdict']['figures'].get('util_pct', -1), 1))")
evidence_a=$(python3 -c "import json; print(json.load(open('$WORK/report_a.json'))['jobs'][0]['verdict']['evidence'])")
ips1=$(field "['images_per_s']" < "$WORK/a1.out" 2>/dev/null || echo 0)
"$GPUENV" run --tune -- python3 resnet_input_bound.py > "$WORK/a2.out" 2> "$WORK/a2.err"
a2_rc=$?
ips2=$(field "['images_per_s']" < "$WORK/a2.out" 2>/dev/null || echo 0)
workers2=$(field "['num_workers']" < "$WORK/a2.out" 2>/dev/null || echo 0)
speedup=$(python3 -c "print(round($ips2 / $ips1, 2) if $ips1 > 0 else 0)")
"$GPUENV" report --json > "$WORK/report_a2.json"
verdict_a2=$(python3 -c "import json; print(json.load(open('$WORK/report_a2.json'))['jobs'][0]['verdict']['name'])")
result "$([ $a1_rc = 0 ] && [ $a2_rc = 0 ] && echo 1)" "both ResNet runs exit 0 ($a1_rc, $a2_rc)"
result "$([ "$verdict_a" = input-bound ] && echo 1)" "report says input-bound (got $verdict_a; utilisation $util_a %: $evidence_a)"
result "$(grep -q 'gpuenv --tune: DataLoader at resnet_input_bound.py' "$WORK/a2.err" && echo 1)" "--tune logged its DataLoader change (num_workers=$workers2)"
result "$(python3 -c "print(1 if $speedup >= 3 else 0)")" "--tune: $ips1 -> $ips2 images/s = ${speedup}x (need >= 3x)"
grep -h "gpuenv" "$WORK/a1.err" "$WORK/a2.err" | head -8
fi

if has b; then
# ---- (b) GPT-2 fp32: watched vs --no-watch, alternating ----
for i in $(seq "$PAIRS"); do
  for mode in watch nowatch; do
    flag=; [ $mode = nowatch ] && flag=--no-watch
    out=$("$GPUENV" run $flag -- python3 gpt_train.py --steps "$GPT_STEPS" --label "$mode$i" 2> "$WORK/gpt_$mode$i.err")
    tps=$(echo "$out" | field "['tokens_per_s']" 2>/dev/null || echo 0)
    if [ $mode = watch ]; then watched+=("$tps"); else unwatched+=("$tps"); fi
    echo "  gpt $mode run $i: $tps tokens/s"
  done
done
overhead=$(python3 -c "
import statistics as s
w, u = [float(x) for x in '${watched[*]}'.split()], [float(x) for x in '${unwatched[*]}'.split()]
print(round(100 * (1 - s.median(w) / s.median(u)), 2) if u and s.median(u) > 0 else 100)")
"$GPUENV" report --json > "$WORK/report_b.json"
verdict_b=$(python3 -c "
import json
jobs = [j for j in json.load(open('$WORK/report_b.json'))['jobs'] if 'gpt_train.py' in j['argv']]
print(jobs[0]['verdict']['name'] if jobs else 'none')")
result "$(python3 -c "print(1 if $overhead <= 1.0 else 0)")" "watching costs GPT-2 ${overhead} % of tokens/s (median of $PAIRS alternating runs; need <= 1 %)"
result "$([ "$verdict_b" = busy ] && echo 1)" "GPT-2's verdict is busy (got $verdict_b)"
fi

# One run of a command, timed end to end: "<wall s> <figure>" from its JSON line.
timed() {  # NAME KEY gpuenv-args...
  local name=$1 key=$2; shift 2
  local t0 t1; t0=$(date +%s.%N)
  "$GPUENV" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"
  t1=$(date +%s.%N)
  echo "$(python3 -c "print(round($t1 - $t0, 2))") $(field "['$key']" < "$WORK/$name.out" 2>/dev/null || echo 0)"
}

if has c; then
# ---- (c) issue 24: the loop, one plain run and five --tune ----
LOOP_STEPS=${LOOP_STEPS:-30}
export GPUENV_CACHE_ROOT=$(mktemp -d)  # a store of its own: the profile starts here
rows=()
read -r wall ips < <(timed c0 images_per_s run -- python3 resnet_input_bound.py --steps "$LOOP_STEPS")
rows+=("untuned $wall $ips -"); echo "  loop run 0 (plain): $ips images/s, $wall s"
for i in 1 2 3 4 5; do
  read -r wall ips < <(timed "c$i" images_per_s run --tune -- python3 resnet_input_bound.py --steps "$LOOP_STEPS")
  applied=$(grep -o 'get [a-z_=0-9A-Z,]*' "$WORK/c$i.err" | head -1 | cut -c5-)
  rows+=("tune$i $wall $ips ${applied:--}"); echo "  loop run $i (--tune ${applied:-nothing}): $ips images/s, $wall s"
  grep -h "tuning profile\|--tune" "$WORK/c$i.err" | sed 's/^/    /' | head -6
done
"$GPUENV" report > "$WORK/report_loop.txt"; cat "$WORK/report_loop.txt"
loop_json=$(python3 -c "
import json, sys
rows = [r.split(' ', 3) for r in sys.argv[1:]]
print(json.dumps([{'run': r[0], 'wall_s': float(r[1]), 'images_per_s': float(r[2]), 'applied': r[3]} for r in rows]))" "${rows[@]}")
python3 - "$loop_json" <<'PY' && ok=1 || ok=0
import json, sys
rows = json.loads(sys.argv[1]); base = rows[0]; tuned = rows[1:]
slow = [r for r in tuned if r['images_per_s'] < 3 * base['images_per_s']]
print('  tuned runs below 3x:', [r['run'] for r in slow])
sys.exit(1 if slow else 0)
PY
result "$ok" "every --tune run >= 3x the untuned images/s"
python3 - "$loop_json" <<'PY' && ok=1 || ok=0
import json, sys
rows = json.loads(sys.argv[1]); base = rows[0]; last = rows[-1]
print('  last tuned wall %.1f s vs untuned %.1f s' % (last['wall_s'], base['wall_s']))
sys.exit(0 if last['wall_s'] <= base['wall_s'] * 1.05 else 1)
PY
result "$ok" "the profile's choice (last run) is no slower end to end than untuned"
result "$(grep -q 'x)' "$WORK/report_loop.txt" && echo 1)" "gpuenv report shows each run's steps/s and the speed-up"
fi

if has d; then
# ---- (d) issue 24: Trainer, untuned then --tune twice ----
TRAINER_STEPS=${TRAINER_STEPS:-60}
export GPUENV_CACHE_ROOT=$(mktemp -d)
rows=()
for i in 0 1 2; do
  flag=; [ $i -gt 0 ] && flag=--tune
  read -r wall sps < <(timed "d$i" samples_per_s run $flag -- python3 trainer_cpu_bound.py --steps "$TRAINER_STEPS")
  rows+=("run$i $wall $sps"); echo "  trainer run $i (${flag:-plain}): $sps samples/s, $wall s"
  grep -h "gpuenv --tune\|tuning profile" "$WORK/d$i.err" | sed 's/^/    /' | head -4
  tail -3 "$WORK/d$i.err" | sed 's/^/    err: /'
done
"$GPUENV" report | head -5
trainer_json=$(python3 -c "
import json, sys
rows = [r.split(' ') for r in sys.argv[1:]]
print(json.dumps([{'run': r[0], 'wall_s': float(r[1]), 'samples_per_s': float(r[2] or 0)} for r in rows]))" "${rows[@]}")
result "$(grep -q 'gpuenv --tune: TrainingArguments' "$WORK/d1.err" && echo 1)" "--tune set Trainer's loader fields"
fi

summary=$(python3 -c "
import json
print(json.dumps({'resnet': {'verdict': '$verdict_a', 'util_pct': $util_a, 'images_per_s_default': $ips1,
                             'images_per_s_tuned': $ips2, 'speedup': $speedup, 'tuned_num_workers': $workers2,
                             'verdict_after_tune': '$verdict_a2'},
                  'loop': $loop_json, 'trainer': $trainer_json,
                  'gpt2': {'watched_tokens_per_s': [float(x) for x in '${watched[*]}'.split()],
                           'unwatched_tokens_per_s': [float(x) for x in '${unwatched[*]}'.split()],
                           'overhead_pct': $overhead, 'verdict': '$verdict_b'},
                  'failures': $fails}, indent=2))")
echo "$summary"
[ -n "${OUT:-}" ] && echo "$summary" > "$OUT/feedback.json" && cp "$WORK"/report_*.json "$OUT/" 2>/dev/null
"$GPUENV" report > "${OUT:-$WORK}/report.txt"; cat "${OUT:-$WORK}/report.txt"
[ $fails = 0 ] && echo "feedback: PASS" || echo "feedback: FAIL ($fails)"
[ $fails = 0 ]
