// wardd's Prometheus endpoint (metrics.h): the URL, the exposition text, and
// libmicrohttpd serving it on a socket bound here (so that a bind failure
// names its errno, and no SO_REUSEPORT lets a second process share it).
#include "enforcers/agent/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>
#include <tuple>

#ifdef WARD_HAVE_MICROHTTPD
#include <microhttpd.h>
#endif

namespace ward::agent {

namespace {

// The URL in an error message: control bytes as \xNN.
std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return "'" + out + "'";
}

bool ParsePort(std::string_view text, uint16_t* port) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 65535) {
    return false;
  }
  *port = static_cast<uint16_t>(value);
  return true;
}

// A label value or HELP text escaped as the format says: backslash and
// newline always, the double quote in label values.
std::string Escape(std::string_view s, bool quote) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

void Family(std::string* out, const char* name, const char* type, const char* help) {
  *out += std::string("# HELP ") + name + " " + Escape(help, false) + "\n";
  *out += std::string("# TYPE ") + name + " " + type + "\n";
}

void Sample(std::string* out, const char* name,
            std::initializer_list<std::pair<const char*, std::string_view>> labels,
            uint64_t value) {
  *out += name;
  if (labels.size() != 0) {
    *out += "{";
    bool first = true;
    for (const auto& [k, v] : labels) {
      *out += std::string(first ? "" : ",") + k + "=\"" + Escape(v, true) + "\"";
      first = false;
    }
    *out += "}";
  }
  *out += " " + std::to_string(value) + "\n";
}

// The outcomes every scrape shows, at 0 before the first call, so that
// rate() and increase() see the first one.
constexpr std::pair<const char*, const char*> kCalls[] = {
    {"apply", "applied"},  {"apply", "unchanged"}, {"apply", "refused"}, {"apply", "failed"},
    {"remove", "removed"}, {"remove", "refused"},  {"remove", "failed"},
};

}  // namespace

bool ParseMetricsUrl(const std::string& url, MetricsUrl* out, std::string* error) {
  const std::string expected =
      "--metrics " + Printable(url) + ": expected tcp://127.0.0.1:PORT or tcp://[::1]:PORT";
  std::string_view v(url);
  if (v.substr(0, 6) != "tcp://") {
    *error = expected;
    return false;
  }
  std::string_view hp = v.substr(6);
  MetricsUrl u;
  std::string_view host, port;
  if (!hp.empty() && hp[0] == '[') {
    const size_t close = hp.find(']');
    if (close == hp.npos || close + 1 >= hp.size() || hp[close + 1] != ':') {
      *error = expected;
      return false;
    }
    host = hp.substr(1, close - 1);
    port = hp.substr(close + 2);
    u.ipv6 = true;
  } else {
    const size_t colon = hp.find(':');
    if (colon == hp.npos) {
      *error = expected;
      return false;
    }
    host = hp.substr(0, colon);
    port = hp.substr(colon + 1);
  }
  u.host = std::string(host);
  if (u.host.empty() || !ParsePort(port, &u.port)) {
    *error = expected;
    return false;
  }
  unsigned char addr[16];
  if (inet_pton(u.ipv6 ? AF_INET6 : AF_INET, u.host.c_str(), addr) != 1) {
    *error = "--metrics " + Printable(url) + ": " + Printable(u.host) + " is not an IP" +
             (u.ipv6 ? "v6" : "v4") + " address";
    return false;
  }
  // No authentication, and a reader's view of the host: loopback only
  // (README.md, "Metrics": a scraper elsewhere goes through a proxy that
  // authenticates it).
  const bool loopback =
      u.ipv6 ? IN6_IS_ADDR_LOOPBACK(reinterpret_cast<in6_addr*>(addr)) : addr[0] == 127;
  if (!loopback) {
    *error = "--metrics " + Printable(url) +
             ": not a loopback address; the endpoint has no authentication, so it listens on "
             "127.0.0.0/8 or [::1] only";
    return false;
  }
#ifndef WARD_HAVE_MICROHTTPD
  (void)out;
  *error = "--metrics: this wardd was built without libmicrohttpd (libmicrohttpd-dev)";
  return false;
#else
  *out = std::move(u);
  return true;
#endif
}

std::string RenderMetrics(const MetricsSnapshot& s) {
  std::string out;
  Family(&out, "ward_agent_up", "gauge", "1 while wardd serves.");
  Sample(&out, "ward_agent_up", {}, 1);

  std::vector<MetricsSnapshot::Policy> policies = s.policies;
  std::sort(policies.begin(), policies.end(), [](const auto& a, const auto& b) {
    return std::tie(a.policy, a.enforcer) < std::tie(b.policy, b.enforcer);
  });
  Family(&out, "ward_agent_policy_generation", "gauge",
         "The generation in force of each policy wardd manages.");
  for (const auto& p : policies) {
    Sample(&out, "ward_agent_policy_generation", {{"policy", p.policy}, {"enforcer", p.enforcer}},
           p.generation);
  }
  Family(
      &out, "ward_agent_policy_in_sync", "gauge",
      "1 when the kernel held the policy as its bundle says at the last apply or check, else 0.");
  for (const auto& p : policies) {
    Sample(&out, "ward_agent_policy_in_sync", {{"policy", p.policy}, {"enforcer", p.enforcer}},
           p.in_sync ? 1 : 0);
  }

  Family(&out, "ward_agent_drift_found_total", "counter",
         "Times a policy in sync was found out of sync (Check, or the check every 30 s).");
  Sample(&out, "ward_agent_drift_found_total", {}, s.drift_found);

  Family(&out, "ward_agent_calls_total", "counter", "Apply and Remove calls by result.");
  for (const auto& [method, result] : kCalls) {
    auto it = s.calls.find({method, result});
    Sample(&out, "ward_agent_calls_total", {{"method", method}, {"result", result}},
           it == s.calls.end() ? 0 : it->second);
  }
  for (const auto& [key, n] : s.calls) {
    const bool listed = std::any_of(std::begin(kCalls), std::end(kCalls), [&](const auto& c) {
      return key.first == c.first && key.second == c.second;
    });
    if (!listed) {
      Sample(&out, "ward_agent_calls_total", {{"method", key.first}, {"result", key.second}}, n);
    }
  }

  Family(&out, "ward_agent_denials_total", "counter",
         "Denials read from the eBPF policies' event buffers, by policy and rule number "
         "(\"none\": no rule matched).");
  for (const auto& [key, n] : s.denials) {
    Sample(&out, "ward_agent_denials_total", {{"policy", key.first}, {"rule", key.second}}, n);
  }
  return out;
}

#ifdef WARD_HAVE_MICROHTTPD

struct MetricsServer::Impl {
  MHD_Daemon* daemon = nullptr;
};

namespace {

constexpr unsigned kConnectionLimit = 8;
constexpr unsigned kTimeoutSeconds = 10;
constexpr char kExposition[] = "text/plain; version=0.0.4; charset=utf-8";

MHD_Result Reply(MHD_Connection* c, unsigned status, const std::string& body, const char* type,
                 const char* allow = nullptr) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  if (r == nullptr) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (allow != nullptr) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
  const MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

// Answered at the first call for a request, before any body is read: no
// method here takes one.
MHD_Result Handle(void* cls, MHD_Connection* c, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/,
                  size_t* /*upload_data_size*/, void** /*request_state*/) {
  auto* agent = static_cast<Agent*>(cls);
  const std::string_view m(method);
  if (std::string_view(url) != "/metrics") {
    return Reply(c, MHD_HTTP_NOT_FOUND, "wardd serves /metrics only\n",
                 "text/plain; charset=utf-8");
  }
  if (m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) {
    return Reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "/metrics: GET only\n",
                 "text/plain; charset=utf-8", "GET, HEAD");
  }
  return Reply(c, MHD_HTTP_OK, RenderMetrics(agent->Metrics()), kExposition);
}

void Log(void* /*cls*/, const char* format, va_list args) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, format, args);
  std::string line(buf);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  std::cerr << "wardd: metrics: " << line << "\n";
}

// A listening socket on the URL's address, SO_REUSEADDR (a restart binds
// while old connections linger in TIME_WAIT) but never SO_REUSEPORT.
int Bind(const MetricsUrl& u, uint16_t* port, std::string* error) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (u.ipv6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(u.port);
    inet_pton(AF_INET6, u.host.c_str(), &a->sin6_addr);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(u.port);
    inet_pton(AF_INET, u.host.c_str(), &a->sin_addr);
    len = sizeof *a;
  }
  const std::string where = "--metrics: " + std::string(u.ipv6 ? "[" : "") + u.host +
                            (u.ipv6 ? "]" : "") + ":" + std::to_string(u.port);
  const int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = where + ": socket: " + std::strerror(errno);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (u.ipv6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 16) != 0) {
    *error = where + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  *port = ntohs(u.ipv6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                       : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return fd;
}

}  // namespace

std::unique_ptr<MetricsServer> MetricsServer::Start(Agent* agent, const std::string& url,
                                                    std::string* error) {
  MetricsUrl u;
  if (!ParseMetricsUrl(url, &u, error)) return nullptr;
  uint16_t port = 0;
  const int fd = Bind(u, &port, error);
  if (fd < 0) return nullptr;
  std::unique_ptr<MetricsServer> s(new MetricsServer);
  s->impl_ = std::make_unique<Impl>();
  // One polling thread (epoll) serves every connection: a scrape is one
  // short request, and the thread count stays fixed whoever connects.
  s->impl_->daemon =
      MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, nullptr, nullptr,
                       &Handle, agent, MHD_OPTION_EXTERNAL_LOGGER, &Log, nullptr,
                       MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, kConnectionLimit,
                       MHD_OPTION_CONNECTION_TIMEOUT, kTimeoutSeconds, MHD_OPTION_END);
  if (s->impl_->daemon == nullptr) {
    close(fd);
    *error = "--metrics: libmicrohttpd did not start";
    return nullptr;
  }
  s->endpoint_ = "tcp://" + std::string(u.ipv6 ? "[" : "") + u.host + (u.ipv6 ? "]" : "") + ":" +
                 std::to_string(port);
  return s;
}

MetricsServer::~MetricsServer() {
  // Closes the listening socket too, and waits for the thread.
  if (impl_ && impl_->daemon) MHD_stop_daemon(impl_->daemon);
}

#else  // no libmicrohttpd: ParseMetricsUrl refuses every URL.

struct MetricsServer::Impl {};

std::unique_ptr<MetricsServer> MetricsServer::Start(Agent*, const std::string& url,
                                                    std::string* error) {
  MetricsUrl u;
  ParseMetricsUrl(url, &u, error);
  return nullptr;
}

MetricsServer::~MetricsServer() = default;

#endif

}  // namespace ward::agent
