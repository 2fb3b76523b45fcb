"""python/sitecustomize.py against a stand-in torch (tests/python/fake_torch):
the TF32 switches stay in step, nothing happens without the override, torch is
never imported by the hook, and a shadowed sitecustomize still runs."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
FAKE = os.path.join(HERE, "fake_torch")
TUNE = os.path.join(os.path.dirname(HERE), "tune_hook")  # a stand-in torch.utils.data


RANK_VARS = ("RANK", "LOCAL_RANK", "SLURM_PROCID")


def environment(hook=True, override=True, extra_path=(), tune=None, torch=FAKE, speed=None, ranks=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "GPUENV_TUNE_DATALOADER", "GPUENV_SPEED_FILE")
           + RANK_VARS}
    env.update(ranks or {})
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(([HOOK] if hook else []) + list(extra_path) + [torch])
    if override:
        env["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] = "1"
    if tune is not None:
        env["GPUENV_TUNE_DATALOADER"] = tune
    if speed is not None:
        env["GPUENV_SPEED_FILE"] = speed
    return env


def python(code, **how):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment(**how))


# A user's own sitecustomize that changes sys.path, as plain python keeps it.
USER_SITE = "import sys\nsys.path.insert(0, '/gpuenv-test/first')\nsys.path.append('/gpuenv-test/last')\n"
SHOW_USER_SITE = ("import sys, sitecustomize\n"
                  "print('/gpuenv-test/first' in sys.path, '/gpuenv-test/last' in sys.path, sitecustomize.__file__)")


NEW_IEEE = "import torch\ntorch.backends.cuda.matmul.fp32_precision = 'ieee'\nprint(torch.backends.cuda.matmul.allow_tf32)"


class StartupHook(unittest.TestCase):
    def test_stand_in_fails_without_the_hook(self):
        r = python(NEW_IEEE, hook=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("mix of the legacy and new APIs", r.stderr)

    def test_new_api_ieee_turns_the_legacy_switch_off(self):
        r = python(NEW_IEEE)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "False"), r.stderr)

    def test_new_api_tf32_keeps_both_on(self):
        r = python(NEW_IEEE.replace("'ieee'", "'tf32'"))
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "True"), r.stderr)

    def test_default_script_keeps_tf32(self):
        r = python("import torch\nprint(torch.backends.cuda.matmul.allow_tf32, torch.backends.cuda.matmul.fp32_precision)")
        self.assertEqual(r.stdout.strip(), "True tf32", r.stderr)

    def test_legacy_api_unchanged(self):
        r = python("import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n"
                   "print(torch.backends.cuda.matmul.allow_tf32, torch.backends.cuda.matmul.fp32_precision)")
        self.assertEqual(r.stdout.strip(), "False ieee", r.stderr)

    def test_nothing_patched_without_the_override(self):
        r = python("import torch\nprint(type(torch.backends.cuda.matmul).__setattr__.__module__)", override=False)
        self.assertEqual(r.stdout.strip(), "torch.backends.cuda", r.stderr)

    def test_hook_imports_no_torch(self):
        r = python("import sys\nprint('torch' in sys.modules)")
        self.assertEqual(r.stdout.strip(), "False", r.stderr)

    def test_shadowed_sitecustomize_still_runs(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("import builtins\nbuiltins.GPUENV_TEST_CHAINED = True\n")
            r = python("import builtins\nprint(getattr(builtins, 'GPUENV_TEST_CHAINED', False))", extra_path=[d])
        self.assertEqual(r.stdout.strip(), "True", r.stderr)

    def test_user_sitecustomize_keeps_its_changes(self):
        # issue 21, 9: its sys.path entries were undone and sitecustomize was gpuenv's.
        with tempfile.TemporaryDirectory() as d:
            mine = os.path.join(d, "sitecustomize.py")
            with open(mine, "w") as f:
                f.write(USER_SITE)
            plain = python(SHOW_USER_SITE, hook=False, extra_path=[d])
            r = python(SHOW_USER_SITE, extra_path=[d])
        self.assertEqual(plain.stdout.strip(), "True True " + mine, plain.stderr)
        self.assertEqual(r.stdout.strip(), plain.stdout.strip(), r.stderr)

    def test_hook_still_works_after_chaining(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write(USER_SITE)
            r = python(NEW_IEEE, extra_path=[d])
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "False"), r.stderr)

    def test_failing_user_sitecustomize_is_said_and_the_script_runs(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("raise RuntimeError('boom')\n")
            r = python("import sys\nprint('ran')", extra_path=[d])
        self.assertEqual(r.stdout.strip(), "ran", r.stderr)
        self.assertIn("the next sitecustomize failed", r.stderr)
        self.assertIn("boom", r.stderr)


# A script that makes a default DataLoader, then chooses its start method.
LOADER_THEN_SPAWN = ("import multiprocessing as mp, torch.utils.data as data\n"
                     "class D(data.Dataset):\n    def __len__(self): return 4\n"
                     "data.DataLoader(D())\n"
                     "mp.set_start_method('spawn')\n"
                     "print(data.CREATED[0]['num_workers'], mp.get_start_method())")

# The job's interpreter starts a helper Python that makes a DataLoader too.
HELPER = ("import subprocess, sys, torch.utils.data as data\n"
          "class D(data.Dataset):\n    def __len__(self): return 4\n"
          "data.DataLoader(D())\n"
          "helper = subprocess.run([sys.executable, '-c', 'import torch.utils.data as data\\n'\n"
          "    'class D(data.Dataset):\\n    def __len__(self): return 4\\n'\n"
          "    'data.DataLoader(D())\\nprint(data.CREATED[0][\"num_workers\"])'],\n"
          "    capture_output=True, text=True)\n"
          "print(data.CREATED[0]['num_workers'], helper.stdout.strip() or helper.stderr)")


class Tune(unittest.TestCase):
    def test_the_start_method_stays_the_scripts(self):
        # issue 21, 10: "context has already been set" only under --tune.
        plain = python(LOADER_THEN_SPAWN, override=False, torch=TUNE)
        r = python(LOADER_THEN_SPAWN, override=False, torch=TUNE, tune="num_workers=3")
        self.assertEqual((plain.returncode, plain.stdout.strip()), (0, "0 spawn"), plain.stderr)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "3 spawn"), r.stderr)

    def test_settings_reach_the_jobs_interpreter_only(self):
        # issue 21, 11: a helper Python the job starts got num_workers too.
        r = python(HELPER, override=False, torch=TUNE, tune="num_workers=3")
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "3 0"), r.stderr)

    # Issue 35: python -I, -E and -S never load the hook, so a variable for it would stay for the
    # next Python the job starts: gpuenv sets none there (decide/run/python_flags.h names these
    # flags). -u, -B, -O, -W and -X leave it loading, and it takes the variable with it.
    SHOW_HOOK = "import os, sys\nprint('gpuenv_sitecustomize' in sys.modules, os.environ.get('GPUENV_TUNE_PRECISION'))"

    def test_the_flags_that_keep_the_hook_out(self):
        env = environment(override=False)
        env["GPUENV_TUNE_PRECISION"] = "bf16"
        for flags, loads in ((["-I"], False), (["-E"], False), (["-S"], False), (["-IS"], False),
                             (["-uE"], False), (["-u", "-B", "-O"], True), (["-W", "ignore"], True),
                             (["-Wignore", "-X", "utf8"], True), ([], True)):
            r = subprocess.run([sys.executable] + flags + ["-c", self.SHOW_HOOK], capture_output=True, text=True,
                               env=env)
            self.assertEqual(r.stdout.split(), [str(loads), "None" if loads else "bf16"], (flags, r.stderr))

    def test_a_shell_wrapper_still_passes_them_on(self):
        # `gpuenv run --tune -- sh -c "python a.py; python b.py"`: each gets them.
        inner = ("import torch.utils.data as data\nclass D(data.Dataset):\n    def __len__(self): return 4\n"
                 "data.DataLoader(D())\nprint(data.CREATED[0]['num_workers'])")
        env = environment(override=False, torch=TUNE, tune="num_workers=3")
        r = subprocess.run(["sh", "-c", '"$0" -c "$1" && "$0" -c "$1"', sys.executable, inner],
                           capture_output=True, text=True, env=env)
        self.assertEqual((r.returncode, r.stdout.split()), (0, ["3", "3"]), r.stderr)

    # Issue 24, 6: under torchrun (or srun) the loader lines come from rank 0 only; every rank is tuned.
    LOADER = ("import json, torch.utils.data as data\nclass D(data.Dataset):\n    def __len__(self): return 4\n"
              "data.DataLoader(D())\nprint(data.CREATED[0]['num_workers'])")

    def tuned_with(self, ranks, code=None):
        r = python(code or self.LOADER, override=False, torch=TUNE, tune="num_workers=3", ranks=ranks)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_one_rank_says_what_every_rank_gets(self):
        said = []
        for ranks in ({"RANK": "0", "LOCAL_RANK": "0"}, {"RANK": "1", "LOCAL_RANK": "1"},
                      {"RANK": "2", "LOCAL_RANK": "0"}, {"RANK": "3", "LOCAL_RANK": "1"}):
            r = self.tuned_with(ranks)
            self.assertEqual(r.stdout.strip(), "3", (ranks, r.stderr))  # tuned on every rank
            said.append(r.stderr.count("gpuenv --tune: DataLoader at <string>:4: num_workers=3"))
        self.assertEqual(said, [1, 0, 0, 0])  # RANK 2 is LOCAL_RANK 0 of another node: quiet too

    def test_which_variable_names_the_rank(self):
        cases = [({}, 1),                                         # a single process speaks
                 ({"LOCAL_RANK": "1"}, 0), ({"LOCAL_RANK": "0"}, 1),
                 ({"SLURM_PROCID": "5"}, 0), ({"SLURM_PROCID": "0", "LOCAL_RANK": "0"}, 1),
                 ({"RANK": "0", "SLURM_PROCID": "4"}, 1),          # torchrun inside an srun task: its RANK
                 ({"RANK": "x", "LOCAL_RANK": "1"}, 0)]            # not a number: the next variable
        for ranks, lines in cases:
            r = self.tuned_with(ranks)
            self.assertEqual((r.stdout.strip(), r.stderr.count("gpuenv --tune: DataLoader")), ("3", lines),
                             (ranks, r.stderr))

    def test_trainer_line_from_rank_0_only(self):
        code = "import transformers as t\na = t.TrainingArguments(output_dir='out')\nprint(a.dataloader_num_workers)"
        for rank, lines in (("0", 1), ("1", 0)):
            r = self.tuned_with({"RANK": rank}, code)
            self.assertEqual((r.stdout.strip(), r.stderr.count("gpuenv --tune: TrainingArguments")), ("3", lines),
                             r.stderr)


# A training loop: 8 batches, an optimizer step after each.
LOOP = ("import os, time, torch, torch.utils.data as data\n"
        "class D(data.Dataset):\n    def __len__(self): return 16\n"
        "opt = torch.optim.Optimizer()\n"
        "for batch in data.DataLoader(D(), batch_size=2):\n    time.sleep(0.01)\n    opt.step()\n"
        "print(os.environ.get('GPUENV_SPEED_FILE'))")


def report(path):
    with open(path) as f:
        words = f.read().split()
    return {k: float(v) for k, v in (w.split("=") for w in words)}


class Speed(unittest.TestCase):
    def test_steps_and_batches_are_counted_and_timed(self):
        with tempfile.NamedTemporaryFile() as f:
            r = python(LOOP, override=False, torch=TUNE, speed=f.name)
            got = report(f.name)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "None"), r.stderr)  # the variable is removed
        self.assertEqual((got["steps"], got["batches"]), (8, 8), got)
        self.assertGreaterEqual(got["last_step"] - got["first_step"], 7 * 0.01, got)
        self.assertLessEqual(got["first_batch"], got["first_step"])
        # The stand-in loader never makes it wait: its 8 batches cost nothing,
        # so even a loaded machine stays far under half a second.
        self.assertLess(got["wait"], 0.5, got)

    def test_the_peak_is_torchs_once_the_job_started_cuda(self):
        # Issue 40, 4: torch.cuda.max_memory_allocated() in every write, the largest kept (the
        # script resets torch's peak before its end), and nothing before the job started CUDA.
        loop = ("import time, torch\nopt = torch.optim.Optimizer()\n"
                "torch.cuda.init()\ntorch.cuda.PEAK[0] = 31 * 2**30\n"
                "for _ in range(3):\n    opt.step()\n"
                "time.sleep(1.05)\nopt.step()\n"  # a second write, with the peak of then
                "torch.cuda.PEAK[0] = 2**20\n")  # reset_peak_memory_stats(): the exit's write keeps 31 GiB
        with tempfile.NamedTemporaryFile() as f:
            r = python(loop, override=False, torch=TUNE, speed=f.name)
            got = report(f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(got["peak_mem"], 31 * 2**30, got)
        self.assertEqual(got["steps"], 4, got)

    def test_no_peak_while_cuda_was_never_started(self):
        # The stand-in's max_memory_allocated() starts CUDA: a hook that asked would have written a peak.
        with tempfile.NamedTemporaryFile() as f:
            r = python(LOOP, override=False, torch=TUNE, speed=f.name)
            got = report(f.name)
            r2 = python("import sys\nprint('torch' in sys.modules)", override=False, torch=TUNE, speed=f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(got["steps"], 8, got)
        self.assertNotIn("peak_mem", got)
        self.assertEqual(r2.stdout.strip(), "False", r2.stderr)  # a job without torch: never imported

    def test_nothing_without_the_variable_nor_a_file_it_did_not_make(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "none")
            r = python(LOOP, override=False, torch=TUNE, speed=missing)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertFalse(os.path.exists(missing))  # never created by the hook
        r = python("import sys, torch\nprint(type(torch.optim.optimizer._POST_HOOKS), len(torch.optim.optimizer._POST_HOOKS))",
                   override=False, torch=TUNE)
        self.assertEqual(r.stdout.strip(), "<class 'list'> 0", r.stderr)

    def test_the_hook_writes_a_bounded_file(self):
        # Steps until the hook has rewritten the file twice and 1000 steps are
        # done: one line, in place, and at most once a second (the writes the
        # loop saw, against the seconds it ran: load can only mean fewer).
        with tempfile.NamedTemporaryFile() as f:
            loop = ("import time, torch\nopt = torch.optim.Optimizer()\n"
                    "seen, n, start = {b''}, 0, time.monotonic()\n"
                    "while (len(seen) < 3 or n < 1000) and time.monotonic() < start + 30:\n"
                    "    opt.step()\n    n += 1\n"
                    "    if n % 100 == 0:\n"
                    "        with open(" + repr(f.name) + ", 'rb') as f:\n            seen.add(f.read())\n"
                    "print(len(seen) - 1, time.monotonic() - start)\n")
            r = python(loop, override=False, torch=TUNE, speed=f.name)
            size = os.path.getsize(f.name)
            got = report(f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        writes, seconds = r.stdout.split()
        self.assertGreaterEqual(int(writes), 2, r.stdout)
        self.assertLessEqual(int(writes), float(seconds) + 1, r.stdout)
        self.assertEqual(size, 320)
        self.assertGreaterEqual(got["steps"], 1000, got)

    def test_its_cost_per_step(self):
        # What one counted step costs, against the same loop unwatched: printed for docs/performance.md.
        # A loose bound, 10x what it cost on a loaded 2-core machine (3.4 us):
        # that the file is written at most once a second is
        # test_the_hook_writes_a_bounded_file's to show.
        loop = ("import time, torch\nopt = torch.optim.Optimizer()\nt = time.perf_counter()\n"
                "for _ in range(200000):\n    opt.step()\nprint(time.perf_counter() - t)")
        with tempfile.NamedTemporaryFile() as f:
            plain = min(float(python(loop, override=False, torch=TUNE).stdout) for _ in range(3))
            watched = min(float(python(loop, override=False, torch=TUNE, speed=f.name).stdout) for _ in range(3))
        cost_us = (watched - plain) / 200000 * 1e6
        sys.stderr.write("speed hook: %.2f us per step\n" % cost_us)
        self.assertLess(cost_us, 35, (plain, watched))


def words(path):
    """The report's words as text: name -> value."""
    with open(path) as f:
        return dict(w.split("=", 1) for w in f.read().split())


class TuneReport(unittest.TestCase):
    """Issue 40: the ImageNet loop passes num_workers=4 and pin_memory=True itself; --tune then
    applied persistent_workers only, yet the record said num_workers=15. The report says per
    setting what was applied and what stayed the script's, which is what gpuenv records."""
    ALL = "num_workers=15,pin_memory=True,persistent_workers=True"

    def reported(self, loaders, tune=ALL, code=None):
        code = code or ("import torch.utils.data as data\nclass D(data.Dataset):\n    def __len__(self): return 4\n"
                        + "".join("data.DataLoader(D()%s)\n" % (", " + a if a else "") for a in loaders)
                        + "print([(c['num_workers'], c['pin_memory'], c['persistent_workers']) for c in data.CREATED])")
        with tempfile.NamedTemporaryFile() as f:
            r = python(code, override=False, torch=TUNE, tune=tune, speed=f.name)
            got = words(f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        if tune is None:
            self.assertNotIn("gpuenv --tune", r.stderr)
        return r.stdout.strip(), got

    def test_the_scripts_num_workers_is_reported_as_yours(self):
        out, got = self.reported(["num_workers=4, pin_memory=True"])
        self.assertEqual(out, "[(4, True, True)]")  # the script's 4 workers kept
        self.assertEqual((got["tuned"], got["yours"]), ("persistent_workers=True", "num_workers=4,pin_memory=True"))

    def test_a_loader_left_at_its_defaults_reports_all_applied(self):
        out, got = self.reported([""])
        self.assertEqual(out, "[(15, True, True)]")
        self.assertEqual(got["tuned"], self.ALL)
        self.assertNotIn("yours", got)

    def test_applied_anywhere_counts_as_applied(self):
        # The script's own 4 workers at one loader, gpuenv's 15 at another: num_workers was applied.
        out, got = self.reported(["num_workers=4", ""])
        self.assertEqual(out, "[(4, True, True), (15, True, True)]")
        self.assertEqual(got["tuned"], self.ALL)
        self.assertNotIn("yours", got)

    def test_nothing_applied_reads_empty(self):
        # Every setting passed by the script (positionally too): nothing applied, all of it the script's.
        _, got = self.reported(["2, False, None, None, 3, None, False, persistent_workers=False"])
        self.assertEqual((got["tuned"], got["yours"]), ("", "num_workers=3,pin_memory=False,persistent_workers=False"))

    def test_no_words_without_tune(self):
        with tempfile.NamedTemporaryFile() as f:
            r = python(LOOP, override=False, torch=TUNE, speed=f.name)
            got = words(f.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("tuned", got)

    def test_watched_without_tune_notes_only_the_scripts_settings(self):
        # The first, untuned run: its verdict must already know --tune cannot change num_workers=4.
        out, got = self.reported(["num_workers=4, pin_memory=True", ""], tune=None)
        self.assertEqual(out, "[(4, True, False), (0, False, False)]")  # nothing changed
        self.assertEqual(got["yours"], "num_workers=4,pin_memory=True")
        self.assertNotIn("tuned", got)

    def test_watched_without_tune_and_loader_defaults_says_nothing(self):
        out, got = self.reported([""], tune=None)
        self.assertEqual(out, "[(0, False, False)]")
        self.assertNotIn("yours", got)
        self.assertNotIn("tuned", got)

    def test_trainers_own_defaults_are_not_the_scripts(self):
        # Trainer passes dataloader_num_workers=0 to DataLoader explicitly: the script chose nothing.
        code = ("import torch.utils.data as data, transformers as t\n"
                "class D(data.Dataset):\n    def __len__(self): return 8\n"
                "for kw in (%s):\n"
                "    l = t.Trainer(args=t.TrainingArguments(output_dir='out', **kw), train_dataset=D()).get_train_dataloader()\n"
                "print(l.num_workers)")
        out, got = self.reported([], tune=None, code=code % "{},")
        self.assertEqual((out, got.get("yours")), ("0", None))
        out, got = self.reported([], tune=None, code=code % "{'dataloader_num_workers': 2},")
        self.assertEqual((out, got.get("yours")), ("2", "num_workers=2"))
        out, got = self.reported([], code=code % "{},")  # tuned: applied, nothing of the script's
        self.assertEqual((out, got["tuned"], got.get("yours")), ("15", self.ALL, None))

    def test_trainer_fields_the_script_set_are_yours(self):
        code = ("import transformers as t\n"
                "a = t.TrainingArguments(output_dir='out', dataloader_num_workers=2)\nprint(a.dataloader_num_workers)")
        out, got = self.reported([], code=code)
        self.assertEqual(out, "2")
        self.assertEqual((got["tuned"], got["yours"]), ("pin_memory=True,persistent_workers=True", "num_workers=2"))


TRAINER = ("import dataclasses, json, torch.utils.data as data, transformers as t\n"
           "from transformers.training_args import Seq2SeqTrainingArguments\n"
           "class D(data.Dataset):\n    def __len__(self): return 8\n"
           "def shown(a):\n    return [a.dataloader_num_workers, a.dataloader_pin_memory, a.dataloader_persistent_workers]\n"
           "runs = [t.TrainingArguments(output_dir='out'),\n"
           "        t.TrainingArguments(output_dir='out', dataloader_num_workers=0),\n"
           "        t.TrainingArguments('out', 4, 1e-4, False, 2),\n"
           "        t.TrainingArguments(output_dir='out', dataloader_persistent_workers=False, dataloader_pin_memory=False),\n"
           "        Seq2SeqTrainingArguments(output_dir='out')]\n"
           "runs.append(dataclasses.replace(runs[0], learning_rate=1.0))\n"
           "loader = t.Trainer(args=runs[0], train_dataset=D()).get_train_dataloader()\n"
           "print(json.dumps([shown(a) for a in runs] + [[loader.num_workers, loader.persistent_workers]]))")

LIGHTNING = ("import json, torch.utils.data as data, lightning.pytorch as pl\n"
             "class D(data.Dataset):\n    def __len__(self): return 8\n"
             "class M(pl.LightningModule):\n    def __init__(self, **kw): self.kw = kw\n"
             "    def train_dataloader(self): return data.DataLoader(D(), batch_size=2, **self.kw)\n"
             "out = []\n"
             "for kw in ({}, {'num_workers': 1}):\n"
             "    l = pl.Trainer().fit(M(**kw))\n"
             "    out.append([l.num_workers, l.pin_memory, l.persistent_workers])\n"
             "print(json.dumps(out))")


class Frameworks(unittest.TestCase):
    def test_trainer_gets_the_fields_the_script_did_not_set(self):
        r = python(TRAINER, override=False, torch=TUNE, tune="num_workers=3,pin_memory=True,persistent_workers=True")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), [
            [3, True, True],     # defaults: tuned
            [0, True, False],    # its dataloader_num_workers=0 kept: no persistent workers without workers
            [2, True, True],     # its 2 workers by position kept; they may persist
            [3, False, False],   # its pin_memory and persistent_workers kept
            [3, True, True],     # a subclass
            [3, True, True],     # dataclasses.replace keeps the tuned values
            [3, True]], r.stdout)  # Trainer's loader gets them
        self.assertIn("gpuenv --tune: TrainingArguments: dataloader_num_workers=3, "
                      "dataloader_persistent_workers=True (yours kept: the fields you set)", r.stderr)

    def test_trainer_untouched_without_tune(self):
        r = python(TRAINER, override=False, torch=TUNE)
        self.assertEqual(json.loads(r.stdout)[0], [0, True, False], r.stderr)

    def test_lightning_loaders_keep_the_settings_when_recreated(self):
        r = python(LIGHTNING, override=False, torch=TUNE, tune="num_workers=3,pin_memory=True,persistent_workers=True")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), [[3, True, True], [1, True, True]], r.stdout)


if __name__ == "__main__":
    unittest.main()
