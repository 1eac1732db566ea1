// A stand-in for wardd's service (agent::Agent), for the transport tests
// only: it touches no kernel state and echoes who called, so that the tests
// can assert what the adapter passed on. The real service (service.cc) is
// tested with the same transport tests when it is built.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "enforcers/agent/access.h"
#include "enforcers/agent/service.h"

namespace ward::agent {

namespace {

class FakeSubscription final : public Subscription {
 public:
  FakeSubscription(std::string hello, const std::atomic<bool>* closed)
      : hello_(std::move(hello)), closed_(closed) {}
  bool Next(v1::Event* event, std::chrono::milliseconds timeout, bool* closed) override {
    if (!sent_) {
      sent_ = true;
      event->set_time("1970-01-01T00:00:00Z");
      event->set_error(hello_);
      return true;
    }
    std::this_thread::sleep_for(std::min(timeout, std::chrono::milliseconds(50)));
    *closed = closed_->load();
    return false;
  }

 private:
  std::string hello_;
  const std::atomic<bool>* closed_;
  bool sent_ = false;
};

class FakeAgent final : public Agent {
 public:
  RpcStatus Apply(const Caller& caller, const v1::ApplyRequest& request,
                  v1::ApplyResponse* response) override {
    if (request.bundle().policy().empty())
      return {RpcStatus::kInvalidArgument, "bundle.policy: empty"};
    response->set_generation(1);
    response->set_changed(true);
    response->set_sha256(request.bundle().sha256());
    response->add_warnings("applied by " + caller.identity);
    return {};
  }
  RpcStatus Remove(const Caller&, const v1::RemoveRequest&, v1::RemoveResponse* response) override {
    response->set_removed(false);
    return {};
  }
  RpcStatus List(const Caller& caller, const v1::ListRequest&,
                 v1::ListResponse* response) override {
    auto* u = response->add_unmanaged();
    u->set_enforcer("fake");
    u->set_policy(caller.identity);
    u->set_what(RoleName(caller.role));
    return {};
  }
  // "block:PATH": writes PATH.entered, then waits for PATH to exist.
  RpcStatus Get(const Caller& caller, const v1::GetRequest& request,
                v1::GetResponse* response) override {
    const std::string& p = request.policy();
    if (p.rfind("block:", 0) == 0) {
      std::string path = p.substr(6);
      std::ofstream(path + ".entered") << caller.identity << "\n";
      for (int i = 0; i < 600 && access(path.c_str(), F_OK) != 0 && !closed_.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    response->mutable_state()->set_policy(caller.identity);
    return {};
  }
  RpcStatus Check(const Caller&, const v1::CheckRequest&, v1::CheckResponse*) override {
    return {};
  }
  std::unique_ptr<Subscription> Watch(const Caller& caller) override {
    if (closed_.load()) return nullptr;
    return std::make_unique<FakeSubscription>("hello " + caller.identity, &closed_);
  }
  void Shutdown() override { closed_.store(true); }

 private:
  std::atomic<bool> closed_{false};
};

}  // namespace

std::unique_ptr<Agent> Agent::Open(const AgentOptions&, std::string*) {
  return std::make_unique<FakeAgent>();
}

bool AgentHolds(const std::string&, int64_t*) { return false; }

}  // namespace ward::agent
