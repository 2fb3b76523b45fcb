"""The job's own speed, for `gpuenv run`'s record (docs/feedback.md, "The
job's speed"). gpuenv makes a private file and names it in GPUENV_SPEED_FILE;
sitecustomize.py calls install(), which removes the variable (Pythons the job
starts itself do not report) and, once torch's modules are imported:

- counts optimizer steps with torch's global step hook
  (torch.optim.optimizer.register_optimizer_step_post_hook): every optimizer,
  the script's, Trainer's or Lightning's;
- counts DataLoader batches and the time spent waiting for each (the
  loader's iterator, _BaseDataLoaderIter.__next__), the first batch's wait
  (worker start-up) left out.

It writes one line of counts and CLOCK_MONOTONIC times (time.monotonic())
over the file's start, at most once a second and at exit, from the job's own
process only: two clock reads per event, no lock, no thread, and a write
that never waits on gpuenv. Nothing here changes what the job computes.

Each write also carries the job's peak GPU memory, peak_mem=BYTES:
torch.cuda.max_memory_allocated() of the current device, the largest seen
(a job that resets torch's peak keeps its earlier one here), and only once
the job itself has initialised CUDA: torch is looked up in sys.modules, never
imported, and CUDA never initialised from here.

Under --tune each line ends with what the tuning really did (sitecustomize.py's
_Report): tuned=num_workers=15,... (what gpuenv's settings changed; empty when
nothing) and yours=num_workers=4 (the settings the script passed itself).
"""
import os
import sys
import time

_VAR = "GPUENV_SPEED_FILE"
_LINE = 320  # bytes per report: the line is rewritten in place, the file stays this size


class Speed:
    def __init__(self, fd, words=None):
        self.fd, self.pid, self.words = fd, os.getpid(), words
        self.steps = self.batches = 0
        self.wait = 0.0
        self.first_step = self.last_step = self.first_batch = self.last_batch = None
        self.written = 0.0
        self.peak_mem = None

    def step(self, *unused):
        now = time.monotonic()
        if self.first_step is None:
            self.first_step = now
        self.last_step = now
        self.steps += 1
        if now - self.written >= 1.0:
            self.write(now)

    def batch(self, started, now):
        if self.first_batch is None:
            self.first_batch = now
        else:
            self.wait += now - started
        self.last_batch = now
        self.batches += 1
        if now - self.written >= 1.0:
            self.write(now)

    def read_peak_mem(self):
        cuda = sys.modules.get("torch.cuda")
        try:
            if cuda is None or not cuda.is_initialized():
                return
            peak = int(cuda.max_memory_allocated())
        except Exception:  # a torch without these calls, or one shutting down
            return
        if peak >= 0 and (self.peak_mem is None or peak > self.peak_mem):
            self.peak_mem = peak

    def line(self):
        parts = ["steps=%d" % self.steps, "batches=%d" % self.batches, "wait=%.6f" % self.wait]
        if self.peak_mem is not None:
            parts.append("peak_mem=%d" % self.peak_mem)
        for name in ("first_step", "last_step", "first_batch", "last_batch"):
            value = getattr(self, name)
            if value is not None:
                parts.append("%s=%.6f" % (name, value))
        if self.words is not None:  # --tune's: what it applied, and the settings the script passed itself
            parts.append(self.words())
        return " ".join(parts)

    def write(self, now=None):
        if os.getpid() != self.pid:  # a forked DataLoader worker: the counts are its parent's
            return
        self.written = time.monotonic() if now is None else now
        self.read_peak_mem()
        try:
            os.pwrite(self.fd, (self.line()[:_LINE - 1].ljust(_LINE - 1) + "\n").encode(), 0)
        except OSError:
            pass


def _watch_optimizer(module, speed):
    register = getattr(module, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(speed.step)


def _watch_loader(module, speed):
    cls = getattr(module, "_BaseDataLoaderIter", None)
    if cls is None or getattr(cls, "_gpuenv_speed", False):
        return
    original = cls.__next__
    clock = time.monotonic

    def __next__(self):
        started = clock()
        batch = original(self)
        speed.batch(started, clock())
        return batch

    cls.__next__ = __next__
    cls._gpuenv_speed = True


def install(after_import, words=None):
    """Reads and removes GPUENV_SPEED_FILE; with a file to write, counts
    steps and batches once torch's modules are imported. `words()`, under
    --tune: "tuned=... yours=...", added to each line."""
    path = os.environ.pop(_VAR, "")
    if not path:
        return None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)  # gpuenv's file: never created here
    except OSError:
        return None
    speed = Speed(fd, words)
    import atexit
    atexit.register(speed.write)
    after_import("torch.optim.optimizer", lambda module: _watch_optimizer(module, speed))
    after_import("torch.utils.data.dataloader", lambda module: _watch_loader(module, speed))
    return speed
