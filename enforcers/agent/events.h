// Watch's fan-out (README.md, "Watch"): every subscriber has its own
// bounded queue; Publish copies an event into each. A subscriber that does
// not keep up loses its oldest events, never blocks the agent: past
// kMaxQueued the oldest is dropped and the next event it reads is an
// `error` saying how many were lost.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "enforcers/agent/service.h"

namespace ward::agent {

class EventHub {
 public:
  static constexpr size_t kMaxQueued = 1024;

  // A new subscription; events published from now on reach it.
  std::unique_ptr<Subscription> Subscribe();
  // Stamps `event` with the time when it has none, and queues it for every
  // subscriber.
  void Publish(v1::Event event);
  // Ends every subscription (Next reports *closed) and refuses new ones.
  void Close();

  struct Queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<v1::Event> events;
    size_t dropped = 0;
    bool closed = false;
  };

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<Queue>> queues_;
  bool closed_ = false;
};

}  // namespace ward::agent
