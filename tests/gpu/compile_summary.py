"""Reads the JSON lines of gpt_train.py --compile runs and prints each
run's compile part: the first compiled step's time after the model is
built (first_step_s - model_ready_s), and its share of the first run's."""
import json
import sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
first = None
for r in runs:
    part = r["first_step_s"] - r["model_ready_s"]
    first = first or part
    hits = (r.get("compile_counters") or {}).get("inductor", {}).get("fxgraph_cache_hit", 0)
    print(f"{r['label']:32s} model ready {r['model_ready_s']:6.2f} s  first step "
          f"{r['first_step_s']:6.2f} s  compile part {part:6.2f} s ({100 * part / first:5.1f} %)"
          f"  fxgraph hits {hits}")
