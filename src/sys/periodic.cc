#include "sys/periodic.h"

#include <utility>

namespace gpuenv {

void Periodic::start(std::chrono::milliseconds interval, std::function<void()> round, std::function<void()> first) {
  stopping_ = false;
  thread_ = std::thread([this, interval, round = std::move(round), first = std::move(first)] {
    loop(interval, round, first);
  });
}

void Periodic::loop(std::chrono::milliseconds interval, const std::function<void()>& round,
                    const std::function<void()>& first) {
  if (first) first();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();  // stop() may come meanwhile: it waits for this round only
    round();
    lock.lock();
  }
}

void Periodic::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpuenv
