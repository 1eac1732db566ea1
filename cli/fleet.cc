#include "cli/fleet.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "cli/output.h"

namespace ward::cli {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string Line(const std::string& result, const std::string& detail) {
  return detail.empty() ? result : result + "  " + detail;
}

// The progress lines. On a terminal every host has its line from the
// start, rewritten in place (cursor up, erase line); elsewhere a line is
// printed once, when its host is done.
class Progress {
 public:
  Progress(const std::vector<std::string>& hosts, bool terminal, bool quiet)
      : hosts_(hosts), quiet_(quiet) {
    for (const std::string& h : hosts) width_ = std::max(width_, h.size());
    struct winsize ws {};
    // Lines above the screen's top cannot be rewritten: plain lines then.
    live_ = !quiet && terminal && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
            ws.ws_row > hosts.size();
    if (!live_) return;
    for (const std::string& h : hosts) std::cout << Pad(h, width_) << "  waiting\n";
    std::cout << std::flush;
  }
  void Set(size_t i, const std::string& text, bool done) {
    if (quiet_) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!live_) {
      if (done) std::cout << Pad(hosts_[i], width_) << "  " << text << "\n" << std::flush;
      return;
    }
    const size_t up = hosts_.size() - i;
    std::cout << "\x1b[" << up << "A\r\x1b[2K" << Pad(hosts_[i], width_) << "  " << text << "\x1b["
              << up << "B\r" << std::flush;
  }

 private:
  const std::vector<std::string>& hosts_;
  size_t width_ = 0;
  bool quiet_ = false;
  bool live_ = false;
  std::mutex mu_;
};

// Runs hosts [begin, end); returns the number that failed. Once `stop` is
// set (by the budget, or before), hosts not yet started are skipped with
// `skip_why`.
size_t RunPhase(size_t begin, size_t end, const FleetPlan& plan, std::optional<size_t> budget,
                const std::string& skip_why, const std::function<HostResult(size_t)>& task,
                Progress* progress, std::vector<HostResult>* results) {
  std::atomic<size_t> next{begin}, failures{0};
  std::atomic<bool> stop{false};
  auto worker = [&] {
    for (size_t i = next++; i < end; i = next++) {
      HostResult& r = (*results)[i];
      if (stop) {
        r.skipped = true;
        r.result = "skipped";
        r.detail = skip_why;
        r.error = "skipped: " + skip_why;
        progress->Set(i, Line(r.result, r.detail), true);
        continue;
      }
      progress->Set(i, plan.verb + "...", false);
      r = task(i);
      if (!r.ok && r.result.empty()) r.result = "failed";
      if (!r.ok && r.detail.empty()) r.detail = r.error;
      progress->Set(i, Line(r.result, r.detail), true);
      if (!r.ok && ++failures > budget.value_or(SIZE_MAX)) stop = true;
    }
  };
  const size_t workers = std::min(plan.parallel, end - begin);
  std::vector<std::thread> threads;
  for (size_t t = 1; t < workers; ++t) threads.emplace_back(worker);
  if (workers > 0) worker();
  for (std::thread& t : threads) t.join();
  return failures;
}

}  // namespace

bool ResolveHosts(const FleetFlags& flags, std::vector<std::string>* hosts, std::string* error) {
  std::map<std::string, std::string> where;
  auto add = [&](const std::string& host, const std::string& from) {
    auto [it, fresh] = where.emplace(host, from);
    if (!fresh) {
      *error = host + " is named twice (" + it->second + " and " + from + ")";
      return false;
    }
    hosts->push_back(host);
    return true;
  };
  if (!flags.hosts_file.empty()) {
    std::ifstream in(flags.hosts_file);
    if (!in) {
      *error = "--hosts " + flags.hosts_file + ": cannot read";
      return false;
    }
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string host = Trim(line.substr(0, line.find('#')));
      if (!host.empty() && !add(host, flags.hosts_file + ":" + std::to_string(n))) return false;
    }
  }
  for (const std::string& h : flags.hosts) {
    if (!add(h, "--host")) return false;
  }
  if (hosts->empty()) {
    *error = flags.hosts_file.empty() ? "name a host: --host URL or --hosts FILE"
                                      : "--hosts " + flags.hosts_file + " names no host";
    return false;
  }
  return true;
}

std::optional<size_t> ParseCount(const std::string& text, size_t total, bool round_up) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string digits = percent ? text.substr(0, text.size() - 1) : text;
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const size_t n = std::stoul(digits);
  if (!percent) return n;
  if (n > 100) return std::nullopt;
  return round_up ? (n * total + 99) / 100 : n * total / 100;
}

std::vector<HostResult> RunFleet(const std::vector<std::string>& hosts, const FleetPlan& plan,
                                 const std::function<HostResult(size_t)>& task) {
  std::vector<HostResult> results(hosts.size());
  Progress progress(hosts, plan.terminal, plan.quiet);
  const size_t canary = std::min(plan.canary, hosts.size());
  size_t failed = 0;
  if (canary > 0)
    failed = RunPhase(0, canary, plan, 0, "a canary failed", task, &progress, &results);
  if (failed > 0) {
    for (size_t i = canary; i < hosts.size(); ++i) {
      HostResult& r = results[i];
      r.skipped = true;
      r.result = "skipped";
      r.detail = "a canary failed";
      r.error = "skipped: a canary failed";
      progress.Set(i, Line(r.result, r.detail), true);
    }
  } else {
    const std::string why =
        plan.max_failures ? "more than " + std::to_string(*plan.max_failures) + " hosts failed"
                          : "";
    RunPhase(canary, hosts.size(), plan, plan.max_failures, why, task, &progress, &results);
  }
  return results;
}

void PrintFleetTable(const std::vector<std::string>& hosts,
                     const std::vector<HostResult>& results) {
  std::vector<std::vector<std::string>> rows = {
      {"HOST", "RESULT", "GENERATION", "CHANGED", "AUDIT HEAD / ERROR"}};
  for (size_t i = 0; i < hosts.size(); ++i) {
    const HostResult& r = results[i];
    rows.push_back({hosts[i], r.result, r.ok ? r.generation_text : "-", r.ok ? r.changed_text : "-",
                    r.ok ? (r.audit_head.empty() ? "-" : r.audit_head) : r.error});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::cout << "\n";
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += c + 1 == row.size() ? row[c] : Pad(row[c], width[c]) + "  ";
    }
    std::cout << line << "\n";
  }
  size_t ok = 0, skipped = 0;
  for (const HostResult& r : results) {
    ok += r.ok;
    skipped += r.skipped;
  }
  std::cout << ok << " ok, " << results.size() - ok - skipped << " failed, " << skipped
            << " skipped\n";
}

void PrintFleetJson(const std::vector<std::string>& hosts, const std::vector<HostResult>& results) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < hosts.size(); ++i) {
    const HostResult& r = results[i];
    nlohmann::ordered_json j = {{"host", hosts[i]},           {"ok", r.ok},
                                {"generation", r.generation}, {"changed", r.changed},
                                {"error", r.error},           {"audit_head", r.audit_head}};
    for (const auto& [k, v] : r.extra.items()) j[k] = v;
    out.push_back(std::move(j));
  }
  std::cout << nlohmann::ordered_json{{"version", 1}, {"hosts", out}}.dump(2) << "\n";
}

void PrintFleetWarnings(const std::vector<std::string>& hosts,
                        const std::vector<HostResult>& results) {
  // The same bundle gives the same warnings everywhere: each once, with the
  // hosts that gave it, in the order they were first seen.
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> from;
  for (size_t i = 0; i < hosts.size(); ++i) {
    for (const std::string& w : results[i].warnings) {
      auto& list = from[w];
      if (list.empty()) order.push_back(w);
      list.push_back(i);
    }
  }
  for (const std::string& w : order) {
    const std::vector<size_t>& list = from[w];
    if (list.size() == 1) {
      std::cerr << hosts[list[0]] << ": " << w << "\n";
    } else {
      std::cerr << list.size() << " hosts: " << w << "\n";
    }
  }
}

int FleetExit(const std::vector<HostResult>& results) {
  for (const HostResult& r : results) {
    if (!r.ok) return kFound;
  }
  return kOk;
}

}  // namespace ward::cli
