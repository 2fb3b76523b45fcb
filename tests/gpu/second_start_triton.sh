#!/bin/bash
# Which Triton kernels the second start of a torch.compile'd model compiles again, and how each
# differs from the entry of the same name that the first start left in the cache (metadata and
# TTIR source). Usage: OUT=DIR tests/gpu/second_start_triton.sh build/gpuenv
set -u
cd "$(dirname "$0")/../.."
B=$1; O=${OUT:-/tmp/gpuenv-gpu}; PY=${PYTHON:-python3}
mkdir -p "$O"
C=$(mktemp -d /tmp/gpuenv-cache-XXXX)
$B run --cache-root "$C" -- $PY tests/gpu/gpt_train.py --compile --steps 2 --label cold 2>$O/err.txt | tail -1 | cut -c1-120
find $C/triton -name '*.json' ! -name '__grp__*' | sort > $O/cold_jsons.txt
touch /tmp/marker; sleep 1
$B run --cache-root "$C" -- $PY tests/gpu/gpt_train.py --compile --steps 2 --label second 2>>$O/err.txt | tail -1 | cut -c1-120
find $C/triton -name '*.json' ! -name '__grp__*' -newer /tmp/marker | sort > $O/second_jsons.txt
echo "cold wrote $(wc -l < $O/cold_jsons.txt) kernel jsons; second wrote $(wc -l < $O/second_jsons.txt)"
$PY - $O/cold_jsons.txt $O/second_jsons.txt <<'PYEOF' | tee $O/diff.txt
import json, os, sys
cold = [l.strip() for l in open(sys.argv[1])]
new = [l.strip() for l in open(sys.argv[2])]
def load(p):
    d = json.load(open(p)); return d
for n in new:
    name = os.path.basename(n)
    dn = load(n)
    same = [c for c in cold if os.path.basename(c) == name and c != n]
    print("SECOND:", n.split("/triton/")[1][:90])
    print("   cold files with the same kernel name:", len(same))
    for c in same:
        dc = load(c)
        keys = sorted(set(dn) | set(dc))
        diff = {k: (dc.get(k), dn.get(k)) for k in keys if dc.get(k) != dn.get(k)}
        print("   vs", c.split("/triton/")[1][:60], "differs in", {k: (str(a)[:80], str(b)[:80]) for k, (a, b) in diff.items()})
    if not same:
        print("   its metadata:", {k: str(v)[:60] for k, v in dn.items() if k not in ("target",)})
PYEOF
for n in $(cat $O/second_jsons.txt); do d=$(dirname $n); ls $d | head; done
# the kernel source in the cold and in the second
for n in $(cat $O/second_jsons.txt | head -1); do f=$(ls $(dirname $n)/*.source 2>/dev/null | head -1); [ -n "$f" ] && cp $f $O/second.source; done
name=$(basename $(head -1 $O/second_jsons.txt) .json)
for c in $(grep "$name" $O/cold_jsons.txt | head -1); do f=$(ls $(dirname $c)/*.source 2>/dev/null | head -1); [ -n "$f" ] && cp $f $O/cold.source; done
[ -f $O/cold.source ] && [ -f $O/second.source ] && diff $O/cold.source $O/second.source | head -40
grep -c . $O/cold_jsons.txt
grep "$name" $O/cold_jsons.txt | head
