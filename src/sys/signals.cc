#include "sys/signals.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>

namespace gpuenv::sys {

const std::vector<int>& stop_signals() {
  static const std::vector<int> kStop = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
  return kStop;
}

bool is_stop_signal(int sig) {
  const auto& stop = stop_signals();
  return std::find(stop.begin(), stop.end(), sig) != stop.end();
}

sigset_t signal_set(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : signals) sigaddset(&set, sig);
  return set;
}

void block_signals(const std::vector<int>& signals, sigset_t* old) {
  sigset_t set = signal_set(signals);
  pthread_sigmask(SIG_BLOCK, &set, old);
}

void unblock_signals(const std::vector<int>& signals) {
  sigset_t set = signal_set(signals);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

bool signal_pending(const std::vector<int>& signals) {
  sigset_t pending;
  if (sigpending(&pending) != 0) return false;
  for (int sig : signals)
    if (sigismember(&pending, sig) == 1) return true;
  return false;
}

void forward_signal(pid_t child, int sig) {
  kill(child, sig);
  if (is_stop_signal(sig)) kill(child, SIGCONT);
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace gpuenv::sys
