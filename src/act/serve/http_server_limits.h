// What evhttp 2.1 (Debian 12's libevent) lacks to stay up at its limits:
// a cap on open connections, a deadline on a request as a whole (evhttp's
// own timeout restarts at every byte read), and a pause in accepting when
// the process is out of descriptors (evconnlistener would retry accept()
// in a loop and log every failure). libevent 2.2 has
// evhttp_set_max_connections; 2.1 has none of it, so this class watches
// every connection evhttp opens through its bufferevent callback.
#pragma once

#include <chrono>
#include <optional>
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
  /// A full table, or a process out of descriptors, makes room by closing
  /// the connection whose client has been quiet longest: nothing received
  /// since it connected (the kernel's clock, so the time it waited to be
  /// accepted counts), since its last byte or since its last answer; a
  /// request not yet read is not quiet. A client quiet for less than this
  /// is kept, as a scraper sends its request a moment after it connects;
  /// while every one is, accepting pauses.
  std::chrono::milliseconds grace{100};
  /// How long accepting pauses after accept() fails (EMFILE, ENFILE).
  std::chrono::milliseconds accept_pause{100};
  /// At most one line per this long for a repeated problem, with a count.
  std::chrono::seconds log_every{10};
};

/// Descriptors kept for NVML, the log and libevent below the limit.
inline constexpr int kSpareDescriptors = 32;

/// min(wanted, RLIMIT_NOFILE's soft limit - kSpareDescriptors), at least 4.
int connection_cap(int wanted);

/// How long the peer of TCP socket `fd` has sent nothing: since its last
/// byte, or since the handshake if it never sent one (TCP_INFO, to the
/// kernel's tick). nullopt when `fd` is not a connected TCP socket.
std::optional<std::chrono::milliseconds> tcp_quiet_for(int fd);

class ConnectionGuard {
 public:
  /// Installs itself on `http` (its bufferevent callback) and on
  /// `listener` (its error callback). Free `http` before this.
  ConnectionGuard(event_base* base, evhttp* http, evconnlistener* listener, const HttpLimits& limits);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  /// Makes each connection's bufferevent (fd -1; evhttp sets it) with
  /// `make` instead of a plain socket one: the TLS server's (tls_server.h).
  void set_connection_maker(bufferevent* (*make)(event_base*, const void*), const void* arg) {
    make_ = make;
    make_arg_ = arg;
  }
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
    int fd;
    Clock::time_point since;  // accepted, or last answered
    // The latest of the client's connect, its last byte, its last answer
    // and the last time a request of it was found unread, as far as known
    // (heard()): never later than the truth, as clients only add bytes.
    Clock::time_point heard;
  };
  static bufferevent* on_new_connection(event_base* base, void* self);
  static void on_close(evhttp_connection* evcon, void* self);
  static void on_accept_error(evconnlistener* listener, void* self);
  static void on_adopt(int, short, void* self);
  static void on_tick(int, short, void* self);
  static void on_wake(int, short, void* self);
  void adopt();
  void close_expired();
  void make_room();
  bool close_quiet_longest();
  void close(std::size_t i);
  void forget(std::size_t i);
  Clock::time_point heard(const Conn& c, Clock::time_point now) const;
  std::size_t quiet_longest(Clock::time_point now);
  std::size_t victim(Clock::time_point now);
  void update_listener();
  void wake_in(std::chrono::milliseconds delay);

  event_base* base_;
  evconnlistener* listener_;
  HttpLimits limits_;
  int cap_;
  std::vector<bufferevent*> pending_;  // made for evhttp, not yet adopted
  std::vector<Conn> open_;
  event* adopt_ = nullptr;
  event* tick_ = nullptr;   // every 100 ms: deadlines
  event* wake_ = nullptr;   // once: the end of a pause, or a client's grace
  Clock::time_point paused_until_{};
  bool accepting_ = true;
  bufferevent* (*make_)(event_base*, const void*) = nullptr;  // nullptr: bufferevent_socket_new
  const void* make_arg_ = nullptr;
  RateLimitedLog accept_log_, full_log_;
};

}  // namespace gpuenv
