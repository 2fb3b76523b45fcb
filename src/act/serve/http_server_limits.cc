#include "act/serve/http_server_limits.h"

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "act/log.h"

namespace gpuenv {
namespace {

constexpr timeval kTick{0, 100 * 1000};
// The kernel counts a client's quiet in ticks (1-10 ms): a figure that moved
// less than this when asked again has not moved.
constexpr std::chrono::milliseconds kHeardSlack{10};

// The listener's error callback gets the listener's argument, which evhttp
// set to itself: the guard of a listener is found here.
std::vector<std::pair<evconnlistener*, ConnectionGuard*>>& guards() {
  static std::vector<std::pair<evconnlistener*, ConnectionGuard*>> all;
  return all;
}

bool out_of_descriptors(int err) { return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM; }

}  // namespace

int connection_cap(int wanted) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return wanted;
  long room = static_cast<long>(rl.rlim_cur) - kSpareDescriptors;
  return static_cast<int>(std::max(4L, std::min(static_cast<long>(wanted), room)));
}

std::optional<std::chrono::milliseconds> tcp_quiet_for(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || info.tcpi_state != TCP_ESTABLISHED)
    return std::nullopt;
  return std::chrono::milliseconds(info.tcpi_last_data_recv);
}

ConnectionGuard::ConnectionGuard(event_base* base, evhttp* http, evconnlistener* listener, const HttpLimits& limits)
    : base_(base),
      listener_(listener),
      limits_(limits),
      cap_(connection_cap(limits.max_connections)),
      accept_log_(limits.log_every, "http"),
      full_log_(limits.log_every, "http") {
  adopt_ = event_new(base, -1, 0, on_adopt, this);
  tick_ = event_new(base, -1, EV_PERSIST, on_tick, this);
  wake_ = event_new(base, -1, 0, on_wake, this);
  event_add(tick_, &kTick);
  evhttp_set_bevcb(http, on_new_connection, this);
  guards().emplace_back(listener, this);
  evconnlistener_set_error_cb(listener, on_accept_error);
  open_.reserve(static_cast<std::size_t>(cap_) + 1);
}

void ConnectionGuard::detach() {
  std::erase_if(guards(), [this](const auto& g) { return g.second == this; });
  listener_ = nullptr;
}

ConnectionGuard::~ConnectionGuard() {
  detach();
  // evhttp_free closed every connection (on_close forgot them); what is
  // left was made but never adopted.
  for (bufferevent* bev : pending_) bufferevent_decref(bev);
  for (Conn& c : open_) bufferevent_decref(c.bev);
  event_free(adopt_);
  event_free(tick_);
  event_free(wake_);
}

// evhttp asks for each accepted connection's bufferevent before it makes
// the connection; the connection is known once it has set its callbacks,
// so adopt() runs right after this accept, from the event loop.
bufferevent* ConnectionGuard::on_new_connection(event_base* base, void* self) {
  auto* g = static_cast<ConnectionGuard*>(self);
  bufferevent* bev = g->make_ ? g->make_(base, g->make_arg_) : bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) return nullptr;
  bufferevent_incref(bev);  // so that it cannot be freed and reused before adopt()
  g->pending_.push_back(bev);
  if (g->open_.size() + g->pending_.size() >= static_cast<std::size_t>(g->cap_) && g->accepting_ && g->listener_) {
    evconnlistener_disable(g->listener_);  // ends the listener's accept loop
    g->accepting_ = false;
  }
  event_active(g->adopt_, EV_TIMEOUT, 1);
  return bev;
}

void ConnectionGuard::on_adopt(int, short, void* self) { static_cast<ConnectionGuard*>(self)->adopt(); }

void ConnectionGuard::adopt() {
  auto now = Clock::now();
  for (bufferevent* bev : pending_) {
    bufferevent_data_cb read_cb = nullptr;
    void* arg = nullptr;
    bufferevent_getcb(bev, &read_cb, nullptr, nullptr, &arg);
    if (read_cb == nullptr || arg == nullptr) {  // evhttp closed it already
      bufferevent_decref(bev);
      continue;
    }
    auto* evcon = static_cast<evhttp_connection*>(arg);  // evhttp's callback argument
    open_.push_back({evcon, bev, bufferevent_getfd(bev), now, now});
    open_.back().heard = heard(open_.back(), now);
    evhttp_connection_set_closecb(evcon, on_close, this);
  }
  pending_.clear();
  make_room();
  update_listener();
}

// Over the cap: the connection quiet longest goes once it has had its
// grace. While every one is within it (a scraper about to send), the table
// stays over the cap and accepting pauses (update_listener).
void ConnectionGuard::make_room() {
  while (open_.size() > static_cast<std::size_t>(cap_)) {
    full_log_.log("export: " + std::to_string(cap_) +
                  " connections open, the most it keeps: closing the one quiet longest");
    if (!close_quiet_longest()) break;
  }
}

// False when every client is within its grace, or evhttp did not say it
// closed (forgotten next tick).
bool ConnectionGuard::close_quiet_longest() {
  std::size_t i = victim(Clock::now()), before = open_.size();
  if (i == before) return false;
  close(i);
  return open_.size() < before;
}

void ConnectionGuard::on_close(evhttp_connection* evcon, void* self) {
  auto* g = static_cast<ConnectionGuard*>(self);
  for (std::size_t i = 0; i < g->open_.size(); ++i)
    if (g->open_[i].evcon == evcon) {
      g->forget(i);
      g->update_listener();
      return;
    }
}

// Drops our hold on connection i; evhttp frees its bufferevent itself.
void ConnectionGuard::forget(std::size_t i) {
  bufferevent_decref(open_[i].bev);
  open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
}

void ConnectionGuard::close(std::size_t i) {
  bufferevent_data_cb read_cb = nullptr;
  bufferevent_getcb(open_[i].bev, &read_cb, nullptr, nullptr, nullptr);
  if (read_cb == nullptr) return forget(i);  // evhttp freed it without telling: never touch it
  evhttp_connection_free(open_[i].evcon);     // on_close forgets it
}

// When the client was last heard from: now while bytes it sent wait to be
// read (a request queued behind others is not quiet), else the kernel's
// figure, or accepting (or answering) where there is none.
ConnectionGuard::Clock::time_point ConnectionGuard::heard(const Conn& c, Clock::time_point now) const {
  int unread = 0;
  if (ioctl(c.fd, FIONREAD, &unread) == 0 && unread > 0) return now;
  auto quiet = tcp_quiet_for(c.fd);
  return quiet ? now - *quiet : c.since;
}

// The connection whose client has been quiet longest (open_.size() when
// none is open). Every `heard` is a lower bound, so the least recent one
// whose figure holds when asked again is the one: most choices ask once.
std::size_t ConnectionGuard::quiet_longest(Clock::time_point now) {
  for (;;) {
    auto it = std::min_element(open_.begin(), open_.end(),
                               [](const Conn& a, const Conn& b) { return a.heard < b.heard; });
    if (it == open_.end()) return open_.size();
    auto was = it->heard;
    it->heard = std::max(was, heard(*it, now));
    if (it->heard <= was + kHeardSlack) return static_cast<std::size_t>(it - open_.begin());
  }
}

// The connection that may go to make room; open_.size() when none may.
std::size_t ConnectionGuard::victim(Clock::time_point now) {
  std::size_t i = quiet_longest(now);
  return i < open_.size() && now - open_[i].heard >= limits_.grace ? i : open_.size();
}

void ConnectionGuard::answered(evhttp_request* req) {
  evhttp_connection* evcon = evhttp_request_get_connection(req);
  for (Conn& c : open_)
    if (c.evcon == evcon) c.since = c.heard = Clock::now();
}

void ConnectionGuard::on_tick(int, short, void* self) {
  auto* g = static_cast<ConnectionGuard*>(self);
  g->close_expired();
  g->make_room();
  g->update_listener();
}

void ConnectionGuard::on_wake(int, short, void* self) {
  auto* g = static_cast<ConnectionGuard*>(self);
  g->make_room();
  g->update_listener();
}

void ConnectionGuard::close_expired() {
  auto now = Clock::now();
  for (std::size_t i = 0; i < open_.size();) {
    if (now - open_[i].since < limits_.request_deadline) {
      ++i;
      continue;
    }
    std::size_t before = open_.size();
    close(i);
    if (open_.size() == before) ++i;  // not closed after all: leave it
  }
}

// Out of descriptors, the connection quiet longest is closed and accepting
// goes on at once with the descriptor it held; otherwise it pauses.
void ConnectionGuard::on_accept_error(evconnlistener* listener, void*) {
  int err = EVUTIL_SOCKET_ERROR();
  auto found = std::find_if(guards().begin(), guards().end(), [&](const auto& g) { return g.first == listener; });
  if (found == guards().end()) {
    evconnlistener_disable(listener);  // no guard left: stop rather than spin
    return;
  }
  ConnectionGuard* g = found->second;
  g->paused_until_ = Clock::now() + g->limits_.accept_pause;
  evconnlistener_disable(listener);
  g->accepting_ = false;
  bool freed = out_of_descriptors(err) && g->close_quiet_longest();
  if (freed) g->paused_until_ = {};
  g->accept_log_.log(std::string("export: accept(): ") + std::strerror(err) +
                     (freed ? "; closing the connection quiet longest"
                            : "; accepting pauses for " + std::to_string(g->limits_.accept_pause.count()) + " ms"));
  g->update_listener();
}

// Accepting, unless paused, or full with every client within its grace;
// when not, a wake-up when the pause or the first grace ends.
void ConnectionGuard::update_listener() {
  if (listener_ == nullptr) return;
  auto now = Clock::now();
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(paused_until_ - now);
  if (wait <= std::chrono::milliseconds(0) && open_.size() + pending_.size() >= static_cast<std::size_t>(cap_)) {
    std::size_t i = quiet_longest(now);
    wait = i == open_.size() ? std::chrono::milliseconds(1)
                             : limits_.grace - std::chrono::floor<std::chrono::milliseconds>(now - open_[i].heard);
  }
  bool want = wait <= std::chrono::milliseconds(0);
  if (!want) wake_in(wait);
  if (want == accepting_) return;
  if (want)
    evconnlistener_enable(listener_);
  else
    evconnlistener_disable(listener_);
  accepting_ = want;
}

void ConnectionGuard::wake_in(std::chrono::milliseconds delay) {
  timeval tv{static_cast<time_t>(delay.count() / 1000), static_cast<suseconds_t>(delay.count() % 1000 * 1000)};
  event_add(wake_, &tv);
}

}  // namespace gpuenv
