// What evhttp 2.1 (Debian 12's libevent) lacks to stay up at its limits:
// a cap on open connections, a deadline on a request as a whole (evhttp's
// own timeout restarts at every byte read), and a pause in accepting when
// the process is out of descriptors (evconnlistener would retry accept()
// in a loop and log every failure). libevent 2.2 has
// evhttp_set_max_connections; 2.1 has none of it, so this class watches
// every connection evhttp opens through its bufferevent callback.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "act/rate_limited_log.h"

struct bufferevent;
struct event;
struct event_base;
struct evconnlistener;
struct evhttp;
struct evhttp_connection;
struct evhttp_request;

namespace gpuenv {

struct HttpLimits {
  /// Connections open at once; lowered to the descriptor limit less
  /// kSpareDescriptors when that is lower (connection_cap()).
  int max_connections = 64;
  /// From accepting (or answering the last request) to the end of the next
  /// request's head and body.
  std::chrono::milliseconds request_deadline{10000};
  /// A full table makes room by closing the connection idle longest, once
  /// it has been open this long; until then accepting pauses.
  std::chrono::milliseconds min_age_to_evict{100};
  /// How long accepting pauses after accept() fails (EMFILE, ENFILE).
  std::chrono::milliseconds accept_pause{100};
  /// At most one line per this long for a repeated problem, with a count.
  std::chrono::seconds log_every{10};
};

/// Descriptors kept for NVML, the log and libevent below the limit.
inline constexpr int kSpareDescriptors = 32;

/// min(wanted, RLIMIT_NOFILE's soft limit - kSpareDescriptors), at least 4.
int connection_cap(int wanted);

class ConnectionGuard {
 public:
  /// Installs itself on `http` (its bufferevent callback) and on
  /// `listener` (its error callback). Free `http` before this.
  ConnectionGuard(event_base* base, evhttp* http, evconnlistener* listener, const HttpLimits& limits);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  /// A request was answered on `req`'s connection: its next one has a new
  /// deadline.
  void answered(evhttp_request* req);
  /// Stops touching the listener: call it before freeing `http`, which
  /// frees the listener before it closes the connections.
  void detach();

 private:
  using Clock = std::chrono::steady_clock;
  struct Conn {
    evhttp_connection* evcon;
    bufferevent* bev;  // held (bufferevent_incref) until evhttp closes it
    Clock::time_point since;  // accepted, or last answered
  };
  static bufferevent* on_new_connection(event_base* base, void* self);
  static void on_close(evhttp_connection* evcon, void* self);
  static void on_accept_error(evconnlistener* listener, void* self);
  static void on_adopt(int, short, void* self);
  static void on_tick(int, short, void* self);
  void adopt();
  void close_expired();
  void make_room();
  void close(std::size_t i);
  void forget(std::size_t i);
  std::size_t idle_longest() const;
  bool evictable(Clock::time_point now) const;
  void update_listener();

  event_base* base_;
  evconnlistener* listener_;
  HttpLimits limits_;
  int cap_;
  std::vector<bufferevent*> pending_;  // made for evhttp, not yet adopted
  std::vector<Conn> open_;
  event* adopt_ = nullptr;
  event* tick_ = nullptr;   // every 250 ms: deadlines, and the end of a pause
  Clock::time_point paused_until_{};
  bool accepting_ = true;
  RateLimitedLog accept_log_, full_log_;
};

}  // namespace gpuenv
