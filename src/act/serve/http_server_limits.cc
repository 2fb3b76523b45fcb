#include "act/serve/http_server_limits.h"

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "act/log.h"

namespace gpuenv {
namespace {

constexpr timeval kTick{0, 100 * 1000};

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

ConnectionGuard::ConnectionGuard(event_base* base, evhttp* http, evconnlistener* listener, const HttpLimits& limits)
    : base_(base),
      listener_(listener),
      limits_(limits),
      cap_(connection_cap(limits.max_connections)),
      accept_log_(limits.log_every, "http"),
      full_log_(limits.log_every, "http") {
  adopt_ = event_new(base, -1, 0, on_adopt, this);
  tick_ = event_new(base, -1, EV_PERSIST, on_tick, this);
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
}

// evhttp asks for each accepted connection's bufferevent before it makes
// the connection; the connection is known once it has set its callbacks,
// so adopt() runs right after this accept, from the event loop.
bufferevent* ConnectionGuard::on_new_connection(event_base* base, void* self) {
  auto* g = static_cast<ConnectionGuard*>(self);
  bufferevent* bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
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
    open_.push_back({evcon, bev, now});
    evhttp_connection_set_closecb(evcon, on_close, this);
  }
  pending_.clear();
  make_room();
  update_listener();
}

// Over the cap: the connection idle longest goes if it has had its
// min_age_to_evict, otherwise the newest (accepting then pauses).
void ConnectionGuard::make_room() {
  auto now = Clock::now();
  while (open_.size() > static_cast<std::size_t>(cap_)) {
    full_log_.log("export: " + std::to_string(cap_) + " connections open, the most it keeps: closing the one idle longest");
    std::size_t before = open_.size();
    close(evictable(now) ? idle_longest() : open_.size() - 1);
    if (open_.size() == before) break;  // evhttp did not say it closed: forgotten next tick
  }
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

std::size_t ConnectionGuard::idle_longest() const {
  auto it = std::min_element(open_.begin(), open_.end(), [](const Conn& a, const Conn& b) { return a.since < b.since; });
  return static_cast<std::size_t>(it - open_.begin());
}

bool ConnectionGuard::evictable(Clock::time_point now) const {
  return !open_.empty() && now - open_[idle_longest()].since >= limits_.min_age_to_evict;
}

void ConnectionGuard::answered(evhttp_request* req) {
  evhttp_connection* evcon = evhttp_request_get_connection(req);
  for (Conn& c : open_)
    if (c.evcon == evcon) c.since = Clock::now();
}

void ConnectionGuard::on_tick(int, short, void* self) {
  auto* g = static_cast<ConnectionGuard*>(self);
  g->close_expired();
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

void ConnectionGuard::on_accept_error(evconnlistener* listener, void*) {
  int err = EVUTIL_SOCKET_ERROR();
  auto found = std::find_if(guards().begin(), guards().end(), [&](const auto& g) { return g.first == listener; });
  if (found == guards().end()) {
    evconnlistener_disable(listener);  // no guard left: stop rather than spin
    return;
  }
  ConnectionGuard* g = found->second;
  auto now = Clock::now();
  g->paused_until_ = now + g->limits_.accept_pause;
  g->accept_log_.log(std::string("export: accept(): ") + std::strerror(err) + "; accepting pauses for " +
                      std::to_string(g->limits_.accept_pause.count()) + " ms" +
                      (out_of_descriptors(err) ? ", and the connection idle longest is closed" : ""));
  if (out_of_descriptors(err) && g->evictable(now)) g->close(g->idle_longest());
  evconnlistener_disable(listener);
  g->accepting_ = false;
}

// Accepting, unless paused, or full with no connection old enough to go.
void ConnectionGuard::update_listener() {
  if (listener_ == nullptr) return;
  auto now = Clock::now();
  bool want = now >= paused_until_ &&
              (open_.size() + pending_.size() < static_cast<std::size_t>(cap_) || evictable(now));
  if (want == accepting_) return;
  if (want)
    evconnlistener_enable(listener_);
  else
    evconnlistener_disable(listener_);
  accepting_ = want;
}

}  // namespace gpuenv
