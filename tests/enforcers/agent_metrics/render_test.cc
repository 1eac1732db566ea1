// The exposition text and the URLs of wardd --metrics (enforcers/agent/metrics.h).
#include "enforcers/agent/metrics.h"

#include <catch2/catch.hpp>

using ward::agent::MetricsSnapshot;
using ward::agent::MetricsUrl;
using ward::agent::ParseMetricsUrl;
using ward::agent::RenderMetrics;

TEST_CASE("metrics: the exposition text, ordered and escaped") {
  MetricsSnapshot s;
  // Out of order, and label values needing every escape the format has.
  s.policies.push_back({"web", "nftables", 3, true});
  s.policies.push_back({"a\\b\"c\nd", "ebpf", 1, false});
  s.calls[{"remove", "removed"}] = 2;
  s.calls[{"apply", "applied"}] = 5;
  s.calls[{"repair", "ok"}] = 1;  // an outcome not listed: after the listed ones
  s.drift_found = 4;
  s.denials[{"web", "none"}] = 7;
  s.denials[{"web", "12"}] = 1;
  const std::string text = RenderMetrics(s);
  CHECK(text ==
        "# HELP ward_agent_up 1 while wardd serves.\n"
        "# TYPE ward_agent_up gauge\n"
        "ward_agent_up 1\n"
        "# HELP ward_agent_policy_generation The generation in force of each policy wardd "
        "manages.\n"
        "# TYPE ward_agent_policy_generation gauge\n"
        "ward_agent_policy_generation{policy=\"a\\\\b\\\"c\\nd\",enforcer=\"ebpf\"} 1\n"
        "ward_agent_policy_generation{policy=\"web\",enforcer=\"nftables\"} 3\n"
        "# HELP ward_agent_policy_in_sync 1 when the kernel held the policy as its bundle says at "
        "the last apply or check, else 0.\n"
        "# TYPE ward_agent_policy_in_sync gauge\n"
        "ward_agent_policy_in_sync{policy=\"a\\\\b\\\"c\\nd\",enforcer=\"ebpf\"} 0\n"
        "ward_agent_policy_in_sync{policy=\"web\",enforcer=\"nftables\"} 1\n"
        "# HELP ward_agent_drift_found_total Times a policy in sync was found out of sync (Check, "
        "or the check every 30 s).\n"
        "# TYPE ward_agent_drift_found_total counter\n"
        "ward_agent_drift_found_total 4\n"
        "# HELP ward_agent_calls_total Apply and Remove calls by result.\n"
        "# TYPE ward_agent_calls_total counter\n"
        "ward_agent_calls_total{method=\"apply\",result=\"applied\"} 5\n"
        "ward_agent_calls_total{method=\"apply\",result=\"unchanged\"} 0\n"
        "ward_agent_calls_total{method=\"apply\",result=\"refused\"} 0\n"
        "ward_agent_calls_total{method=\"apply\",result=\"failed\"} 0\n"
        "ward_agent_calls_total{method=\"remove\",result=\"removed\"} 2\n"
        "ward_agent_calls_total{method=\"remove\",result=\"refused\"} 0\n"
        "ward_agent_calls_total{method=\"remove\",result=\"failed\"} 0\n"
        "ward_agent_calls_total{method=\"repair\",result=\"ok\"} 1\n"
        "# HELP ward_agent_denials_total Denials read from the eBPF policies' event buffers, by "
        "policy and rule number (\"none\": no rule matched).\n"
        "# TYPE ward_agent_denials_total counter\n"
        "ward_agent_denials_total{policy=\"web\",rule=\"12\"} 1\n"
        "ward_agent_denials_total{policy=\"web\",rule=\"none\"} 7\n");
  CHECK(RenderMetrics(s) == text);  // the same snapshot, the same bytes
}

TEST_CASE("metrics: the URLs taken") {
  MetricsUrl u;
  std::string error;
  REQUIRE(ParseMetricsUrl("tcp://127.0.0.1:9464", &u, &error));
  CHECK((u.host == "127.0.0.1" && !u.ipv6 && u.port == 9464));
  REQUIRE(ParseMetricsUrl("tcp://127.1.2.3:0", &u, &error));
  CHECK((u.host == "127.1.2.3" && u.port == 0));
  REQUIRE(ParseMetricsUrl("tcp://[::1]:65535", &u, &error));
  CHECK((u.host == "::1" && u.ipv6 && u.port == 65535));
}

TEST_CASE("metrics: the URLs refused") {
  MetricsUrl u;
  std::string error;
  const std::string expected = ": expected tcp://127.0.0.1:PORT or tcp://[::1]:PORT";
  for (const char* url :
       {"", "tcp://", "tcp://127.0.0.1", "tcp://127.0.0.1:", "tcp://:9464", "tcp://127.0.0.1:x",
        "tcp://127.0.0.1:-1", "tcp://127.0.0.1:65536", "tcp://[::1]", "tcp://[::1:9464",
        "http://127.0.0.1:9464", "unix:///run/ward/metrics.sock"}) {
    INFO(url);
    CHECK_FALSE(ParseMetricsUrl(url, &u, &error));
    CHECK(error == "--metrics '" + std::string(url) + "'" + expected);
  }
  CHECK_FALSE(ParseMetricsUrl("tcp://::1:9464", &u, &error));  // IPv6 needs its brackets
  CHECK(error == "--metrics 'tcp://::1:9464'" + expected);
  CHECK_FALSE(ParseMetricsUrl("tcp://[127.0.0.1]:9464", &u, &error));
  CHECK(error == "--metrics 'tcp://[127.0.0.1]:9464': '127.0.0.1' is not an IPv6 address");
  CHECK_FALSE(ParseMetricsUrl("tcp://192.0.2.1:9464", &u, &error));
  CHECK(error ==
        "--metrics 'tcp://192.0.2.1:9464': not a loopback address; the endpoint has no "
        "authentication, so it listens on 127.0.0.0/8 or [::1] only");
  CHECK_FALSE(ParseMetricsUrl("tcp://[::ffff:127.0.0.1]:9464", &u, &error));
  CHECK(
      error.ends_with(": not a loopback address; the endpoint has no authentication, so it "
                      "listens on 127.0.0.0/8 or [::1] only"));
  CHECK_FALSE(ParseMetricsUrl("tcp://127.0.0.1:9464\n", &u, &error));
  CHECK(error == "--metrics 'tcp://127.0.0.1:9464\\x0a'" + expected);
}
