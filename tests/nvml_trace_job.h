// A job for `gpuenv run` that lasts as long as the watcher needs, waiting on
// events rather than time: the stand-in NVML writes each call it answers to
// $FAKE_NVML_TRACE, and the job waits there for the watcher's samples.
#pragma once

#include <string>

namespace gpuenv::testing {

/// Python source (for `python3 -c`) that runs `before`, then waits until
/// $FAKE_NVML_TRACE holds `more` calls of `call` beyond those it held then
/// (30 s at most; no fork meanwhile), then runs `after`.
inline std::string until_nvml_calls(const std::string& call, int more, const std::string& before = "",
                                    const std::string& after = "") {
  return "import os, time\n" + before +
         "def reads():\n"
         "    try:\n"
         "        with open(os.environ['FAKE_NVML_TRACE']) as f:\n"
         "            return f.read().count('" + call + "')\n"
         "    except OSError:\n"
         "        return 0\n"
         "end, start = time.monotonic() + 30, reads()\n"
         "while reads() < start + " + std::to_string(more) + " and time.monotonic() < end:\n"
         "    time.sleep(0.02)\n" + after;
}

}  // namespace gpuenv::testing
