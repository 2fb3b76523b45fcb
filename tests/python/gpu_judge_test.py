"""tests/gpu/judge.py without a GPU, on what the H100 wrote on 2026-12-06
(tests/gpu/fixtures/h100-2026-12-06): each claim read from the rows the
scripts really write, so a judge that misreads them (a speed row taken for
missing, as once) fails here before it fails on the device. Writes only
under its temp dir."""
import io
import contextlib
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = os.path.join(HERE, "..", "gpu")
FIXTURES = os.path.join(GPU, "fixtures", "h100-2026-12-06")
sys.path.insert(0, GPU)
import judge  # noqa: E402


class Judge(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        os.environ["OUT"] = self.tmp.name

    def claims(self, *argv):
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(judge.main(list(argv)), 0)
        with open(os.path.join(self.tmp.name, "claims.jsonl")) as f:
            return {r["claim"]: r for r in map(json.loads, f)}

    def test_precision_reads_the_speed_rows_and_the_curves(self):
        files = [os.path.join(FIXTURES, n + ".jsonl") for n in ("gpt", "gpt_precision", "resnet", "resnet_precision")]
        c = self.claims("precision", *files)
        gpt = c["gpt: --tune=+precision against hand-written bf16 autocast"]
        self.assertTrue(gpt["pass"])
        self.assertTrue(gpt["measured"].startswith("100.1 % (343499 vs 343081 tokens/s)"), gpt["measured"])
        resnet = c["resnet: --tune=+precision against hand-written bf16 autocast"]
        self.assertTrue(resnet["pass"])
        self.assertTrue(resnet["measured"].startswith("100.3 % (2164 vs 2158 images/s)"), resnet["measured"])
        self.assertTrue(c["gpt: --tune=+precision's loss curve inside the seed tolerance"]["pass"])
        # That run's ResNet curves (B32, unwarmed) put +precision just outside one other seed's distance.
        curve = c["resnet: --tune=+precision's loss curve inside the seed tolerance"]
        self.assertFalse(curve["pass"])
        self.assertEqual((curve["threshold"], curve["measured"]), ("d <= 0.7507 (fp32, another seed)", "d = 0.7933"))
        self.assertTrue(c["resnet: the tolerance can fail (stale weights exceed it)"]["pass"])
        self.assertEqual(len(c), 6)

    def test_a_missing_run_is_a_failed_claim(self):
        c = self.claims("precision", os.path.join(FIXTURES, "gpt.jsonl"))
        self.assertFalse(c["gpt: --tune=+precision speed"]["pass"])
        self.assertFalse(c["gpt: loss curves"]["pass"])

    def test_detect_and_env_against_nvidia_smi(self):
        c = self.claims("detect", os.path.join(FIXTURES, "time_detect.txt"))
        self.assertEqual(sorted(c), ["gpuenv detect as fast as nvidia-smi", "gpuenv env as fast as nvidia-smi"])
        self.assertIn("+0.61 ms (CI +0.52 .. +0.75)", c["gpuenv env as fast as nvidia-smi"]["measured"])
        self.assertTrue(all(r["pass"] for r in c.values()))

    def plan_memory(self, planned):
        path = os.path.join(self.tmp.name, "plan_memory.json")
        with open(path, "w") as f:
            json.dump({"rows": [], "summary": {"planned_job": planned}}, f)
        return self.claims("plan-memory", path)["report holds a planned job's plan against its measured peak"]

    def test_a_planned_job_is_judged_from_its_record(self):
        gib = 2**30
        job = {"id": 1, "peak_memory_bytes": int(10.6 * gib), "peak_memory_source": "torch",
               "planned_peak_bytes": int(10.5 * gib), "plan_error_pct": 0.95, "memory_plan": {}}
        planned = {"flags": "--batch 8", "plan_peak_bytes": int(10.5 * gib), "script_peak_bytes": 10.6 * gib, "job": job}
        c = self.plan_memory(planned)
        self.assertTrue(c["pass"], c)
        self.assertEqual(c["measured"], "job 1: planned 10.50 GiB (plan-memory said 10.50 GiB), peak 10.60 GiB "
                                        "from torch (the script's own 10.60 GiB): +0.9 %")
        for change in ({"plan_error_pct": None, "planned_peak_bytes": None},  # the plan never reached the record
                       {"peak_memory_source": "nvml"},                        # the hook did not measure it
                       {"plan_error_pct": -12.0}):                            # the plan was off
            self.assertFalse(self.plan_memory(dict(planned, job=dict(job, **change)))["pass"], change)
        self.assertFalse(self.plan_memory({"failure": "RuntimeError('gpuenv run: exit 1')"})["pass"])

    def test_plan_memory_as_the_h100_wrote_it(self):
        c = self.claims("plan-memory", os.path.join(FIXTURES, "plan_memory.json"))
        self.assertEqual(len(c), 23)  # 16 rows, 5 with the logits kept, the edge, the planned job
        self.assertTrue(all(r["pass"] for r in c.values()), [k for k, r in c.items() if not r["pass"]])
        self.assertEqual(c["llama-350M bf16 ckpt"]["measured"], "-0.7 % (11.54 vs 11.62 GiB)")
        job = c["report holds a planned job's plan against its measured peak"]["measured"]
        self.assertTrue(job.startswith("job 1: planned 10.61 GiB (plan-memory said 10.61 GiB), peak 10.61 GiB"), job)

    def test_unreadable_output_is_a_failed_claim(self):
        c = self.claims("detect", os.path.join(self.tmp.name, "absent.txt"))
        self.assertEqual([(k, r["pass"]) for k, r in c.items()], [("its output could be read", False)])


if __name__ == "__main__":
    unittest.main()
