// wardd's Prometheus endpoint (`--metrics tcp://127.0.0.1:PORT`, README.md,
// "Metrics"): GET /metrics in the text exposition format 0.0.4, served by
// libmicrohttpd, from Agent::Metrics(). Off by default; loopback only, as
// it has no authentication and tells anyone who connects what the host
// enforces (what a reader of the socket may see).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "enforcers/agent/service.h"

namespace ward::agent {

struct MetricsUrl {
  std::string host;  // the IP address as given, without brackets
  bool ipv6 = false;
  uint16_t port = 0;  // 0: a free port, chosen at bind
};

// "tcp://127.0.0.1:PORT" or "tcp://[::1]:PORT" (any 127.0.0.0/8 address;
// PORT 0 to 65535); false with *error naming the URL otherwise, and for a
// wardd built without libmicrohttpd. Nothing is opened.
bool ParseMetricsUrl(const std::string& url, MetricsUrl* out, std::string* error);

// The snapshot in the text exposition format 0.0.4: a HELP and a TYPE line
// per family, families and samples in a fixed order (the same snapshot
// gives the same bytes), label values escaped (\\, \", \n).
std::string RenderMetrics(const MetricsSnapshot& snapshot);

class MetricsServer {
 public:
  // Binds the URL (ParseMetricsUrl) and serves `agent` (which must outlive
  // the server) on one thread of libmicrohttpd's; nullptr with *error when
  // the URL is refused or the address cannot be bound.
  static std::unique_ptr<MetricsServer> Start(Agent* agent, const std::string& url,
                                              std::string* error);
  ~MetricsServer();  // stops serving and closes the socket
  // "tcp://127.0.0.1:PORT" with the port bound.
  const std::string& endpoint() const { return endpoint_; }

 private:
  MetricsServer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string endpoint_;
};

}  // namespace ward::agent
