#include "enforcers/agent/events.h"

#include <string>

#include "enforcers/agent/state.h"

namespace ward::agent {
namespace {

class QueueSubscription : public Subscription {
 public:
  explicit QueueSubscription(std::shared_ptr<EventHub::Queue> q) : q_(std::move(q)) {}
  bool Next(v1::Event* event, std::chrono::milliseconds timeout, bool* closed) override {
    std::unique_lock<std::mutex> lock(q_->mu);
    *closed = false;
    q_->cv.wait_for(lock, timeout, [&] { return q_->closed || !q_->events.empty(); });
    if (q_->dropped > 0) {
      event->Clear();
      event->set_time(NowRfc3339());
      event->set_error(std::to_string(q_->dropped) +
                       " events were dropped: this watcher did not keep up");
      q_->dropped = 0;
      return true;
    }
    if (!q_->events.empty()) {
      *event = std::move(q_->events.front());
      q_->events.pop_front();
      return true;
    }
    *closed = q_->closed;
    return false;
  }

 private:
  std::shared_ptr<EventHub::Queue> q_;
};

}  // namespace

std::unique_ptr<Subscription> EventHub::Subscribe() {
  auto q = std::make_shared<Queue>();
  std::lock_guard<std::mutex> lock(mu_);
  q->closed = closed_;
  // Forget the subscriptions that went away.
  std::erase_if(queues_, [](const std::weak_ptr<Queue>& w) { return w.expired(); });
  queues_.push_back(q);
  return std::make_unique<QueueSubscription>(std::move(q));
}

void EventHub::Publish(v1::Event event) {
  if (event.time().empty()) event.set_time(NowRfc3339());
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::weak_ptr<Queue>& w : queues_) {
    std::shared_ptr<Queue> q = w.lock();
    if (!q) continue;
    {
      std::lock_guard<std::mutex> ql(q->mu);
      if (q->events.size() >= kMaxQueued) {
        q->events.pop_front();
        ++q->dropped;
      }
      q->events.push_back(event);
    }
    q->cv.notify_all();
  }
}

void EventHub::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  for (const std::weak_ptr<Queue>& w : queues_) {
    std::shared_ptr<Queue> q = w.lock();
    if (!q) continue;
    {
      std::lock_guard<std::mutex> ql(q->mu);
      q->closed = true;
    }
    q->cv.notify_all();
  }
}

}  // namespace ward::agent
