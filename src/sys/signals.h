// Signals: the set that asks a process to stop, blocking and unblocking
// them, and passing one on to a child. Every command that waits on or
// forwards signals takes its sets and calls from here.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace gpuenv::sys {

/// The signals that ask a process to stop: SIGTERM, SIGINT, SIGHUP and
/// SIGQUIT (each ends a process by default).
const std::vector<int>& stop_signals();

/// Whether `sig` is one of stop_signals().
bool is_stop_signal(int sig);

/// `signals` as a sigset_t.
sigset_t signal_set(const std::vector<int>& signals);

/// Blocks `signals` in the calling thread (threads it starts inherit the
/// mask), the previous mask in *old when given.
void block_signals(const std::vector<int>& signals, sigset_t* old = nullptr);

/// Unblocks `signals` in the calling thread.
void unblock_signals(const std::vector<int>& signals);

/// Whether one of `signals` is pending (blocked and not yet taken).
bool signal_pending(const std::vector<int>& signals);

/// Passes `sig` on to `child`; after a stop signal it sends SIGCONT too, so
/// that a stopped child can act on it.
void forward_signal(pid_t child, int sig);

/// "SIGTERM" for SIGTERM; "signal N" for one without a name.
std::string signal_name(int sig);

}  // namespace gpuenv::sys
