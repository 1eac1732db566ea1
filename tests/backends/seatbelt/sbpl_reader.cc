#include "tests/backends/seatbelt/sbpl_reader.h"

#include <arpa/inet.h>

#include <algorithm>
#include <regex>
#include <set>

namespace ward::test::sbpl {
namespace {

struct Node {
  enum Kind { kSymbol, kString, kList } kind = kSymbol;
  std::string text;
  std::vector<Node> items;
};

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}

  std::vector<Node> All() {
    std::vector<Node> out;
    for (Skip(); i_ < t_.size(); Skip()) out.push_back(One());
    return out;
  }

 private:
  void Skip() {
    while (i_ < t_.size()) {
      if (t_[i_] == ';') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (isspace(static_cast<unsigned char>(t_[i_]))) {
        ++i_;
      } else {
        break;
      }
    }
  }

  Node One() {
    Skip();
    if (i_ >= t_.size()) throw Error("unexpected end of profile");
    char c = t_[i_];
    if (c == '(') {
      ++i_;
      Node n{Node::kList, "", {}};
      for (Skip(); i_ < t_.size() && t_[i_] != ')'; Skip()) n.items.push_back(One());
      if (i_ >= t_.size()) throw Error("unclosed (");
      ++i_;
      return n;
    }
    if (c == ')') throw Error("unexpected ) at offset " + std::to_string(i_));
    if (c == '#' && i_ + 1 < t_.size() && t_[i_ + 1] == '"') {  // #"raw": no escapes
      size_t end = t_.find('"', i_ + 2);
      if (end == std::string::npos) throw Error("unclosed #\"");
      Node n{Node::kString, t_.substr(i_ + 2, end - i_ - 2), {}};
      i_ = end + 1;
      return n;
    }
    if (c == '"') {
      std::string s;
      for (++i_; i_ < t_.size() && t_[i_] != '"'; ++i_) {
        if (t_[i_] == '\\') {
          if (++i_ >= t_.size()) break;
          char e = t_[i_];
          if (e != '"' && e != '\\') throw Error(std::string("unknown string escape \\") + e);
        }
        s += t_[i_];
      }
      if (i_ >= t_.size()) throw Error("unclosed string");
      ++i_;
      return {Node::kString, s, {}};
    }
    size_t start = i_;
    while (i_ < t_.size() && !isspace(static_cast<unsigned char>(t_[i_])) && t_[i_] != '(' &&
           t_[i_] != ')' && t_[i_] != '"' && t_[i_] != ';') {
      ++i_;
    }
    return {Node::kSymbol, t_.substr(start, i_ - start), {}};
  }

  const std::string& t_;
  size_t i_ = 0;
};

const std::set<std::string>& Operations() {
  static const std::set<std::string> ops = {
      "default",
      "file*",
      "file-read*",
      "file-read-data",
      "file-read-metadata",
      "file-read-xattr",
      "file-write*",
      "file-write-data",
      "file-write-create",
      "file-write-unlink",
      "file-write-mode",
      "file-write-owner",
      "file-write-times",
      "file-write-xattr",
      "file-write-flags",
      "file-link",
      "file-ioctl",
      "file-map-executable",
      "process*",
      "process-exec",
      "process-exec*",
      "process-fork",
      "process-info*",
      "signal",
      "sysctl*",
      "sysctl-read",
      "sysctl-write",
      "mach*",
      "mach-lookup",
      "mach-register",
      "ipc-posix*",
      "ipc-posix-shm*",
      "ipc-posix-shm-read-data",
      "ipc-posix-shm-write-data",
      "ipc-posix-sem",
      "network*",
      "network-outbound",
      "network-inbound",
      "network-bind",
      "lsopen",
      "appleevent-send",
      "iokit-open",
  };
  return ops;
}

bool OperationCovers(const std::string& rule, const std::string& query) {
  if (rule == query) return true;
  if (!rule.empty() && rule.back() == '*') {
    return query.compare(0, rule.size() - 1, rule, 0, rule.size() - 1) == 0;
  }
  return false;
}

bool Loopback(const std::string& address) {
  in_addr a4;
  in6_addr a6;
  if (inet_pton(AF_INET, address.c_str(), &a4) == 1) {
    return (ntohl(a4.s_addr) >> 24) == 127;
  }
  if (inet_pton(AF_INET6, address.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  throw Error("not an address in a query: " + address);
}

const std::string& StringArg(const Node& n, size_t i) {
  if (n.items.size() <= i || n.items[i].kind != Node::kString) {
    throw Error("filter " + n.items[0].text + " needs a string");
  }
  return n.items[i].text;
}

// "HOST:PORT" against the query's address and port.
bool HostPort(const std::string& spec, const Query& q, bool remote) {
  size_t colon = spec.rfind(':');
  if (colon == std::string::npos) throw Error("expected HOST:PORT, got " + spec);
  std::string host = spec.substr(0, colon), port = spec.substr(colon + 1);
  if (host != "*" && host != "localhost") throw Error("SBPL names only * or localhost: " + spec);
  if (port != "*") {
    if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(port) > 65535) {
      throw Error("bad port in " + spec);
    }
    if (std::stoul(port) != q.port) return false;
  }
  if (host == "localhost") return remote ? Loopback(q.address) : false;
  return true;
}

bool Matches(const Node& f, const Query& q) {
  if (f.kind != Node::kList || f.items.empty() || f.items[0].kind != Node::kSymbol) {
    throw Error("a filter must be a list starting with its name");
  }
  const std::string& name = f.items[0].text;
  const bool file = !q.unix_socket && q.operation.rfind("file", 0) == 0;
  const bool exec = q.operation.rfind("process-exec", 0) == 0;
  if (name == "literal" || name == "path") return (file || exec) && q.path == StringArg(f, 1);
  if (name == "subpath") {
    const std::string& p = StringArg(f, 1);
    if (!(file || exec)) return false;
    if (p == "/") return !q.path.empty() && q.path[0] == '/';
    return q.path == p || q.path.rfind(p + "/", 0) == 0;
  }
  if (name == "regex") {
    if (!(file || exec)) return false;
    std::regex re(StringArg(f, 1), std::regex::extended);
    return std::regex_search(q.path, re);
  }
  if (name == "require-all" || name == "require-any") {
    if (f.items.size() < 2) throw Error(name + " needs filters");
    bool all = name == "require-all";
    for (size_t i = 1; i < f.items.size(); ++i) {
      bool m = Matches(f.items[i], q);
      if (all && !m) return false;
      if (!all && m) return true;
    }
    return all;
  }
  if (name == "require-not") {
    if (f.items.size() != 2) throw Error("require-not takes one filter");
    return !Matches(f.items[1], q);
  }
  if (name == "remote" || name == "local") {
    if (f.items.size() != 3 || f.items[1].kind != Node::kSymbol) {
      throw Error(name + " takes a kind and an address");
    }
    const std::string& kind = f.items[1].text;
    if (kind == "unix-socket") {
      const Node& p = f.items[2];
      if (name != "remote" || p.kind != Node::kList || p.items.size() != 2 ||
          p.items[0].text != "path-literal") {
        throw Error("expected (remote unix-socket (path-literal P))");
      }
      return q.unix_socket && q.path == StringArg(p, 1);
    }
    if (kind != "tcp" && kind != "udp" && kind != "ip") throw Error("unknown kind " + kind);
    if (q.unix_socket || q.protocol.empty()) return false;
    if (kind != "ip" && kind != q.protocol) return false;
    return HostPort(StringArg(f, 2), q, name == "remote");
  }
  if (name == "sysctl-name" || name == "global-name" || name == "ipc-posix-name") {
    return q.name == StringArg(f, 1);
  }
  if (name == "sysctl-name-prefix") return q.name.rfind(StringArg(f, 1), 0) == 0;
  if (name == "target") {
    if (f.items.size() != 2 || (f.items[1].text != "self" && f.items[1].text != "same-sandbox")) {
      throw Error("(target self|same-sandbox)");
    }
    return true;  // queries only ask about the sandbox's own processes
  }
  throw Error("unknown filter " + name);
}

struct Rule {
  bool allow;
  std::vector<std::string> ops;
  std::vector<Node> filters;
};

}  // namespace

struct Profile::Impl {
  std::optional<bool> default_allow;
  std::vector<Rule> rules;
};

Profile::Profile(const std::string& text) : impl_(std::make_unique<Impl>()) {
  std::vector<Node> forms = Parser(text).All();
  if (forms.empty() || forms[0].kind != Node::kList || forms[0].items.size() != 2 ||
      forms[0].items[0].text != "version" || forms[0].items[1].text != "1") {
    throw Error("a profile starts with (version 1)");
  }
  for (size_t i = 1; i < forms.size(); ++i) {
    const Node& f = forms[i];
    if (f.kind != Node::kList || f.items.size() < 2 || f.items[0].kind != Node::kSymbol ||
        (f.items[0].text != "allow" && f.items[0].text != "deny")) {
      throw Error("expected (allow ...) or (deny ...)");
    }
    Rule r{f.items[0].text == "allow", {}, {}};
    size_t j = 1;
    for (; j < f.items.size() && f.items[j].kind == Node::kSymbol; ++j) {
      if (!Operations().count(f.items[j].text)) {
        throw Error("unknown operation " + f.items[j].text);
      }
      r.ops.push_back(f.items[j].text);
    }
    if (r.ops.empty()) throw Error("a rule names an operation");
    for (; j < f.items.size(); ++j) {
      if (f.items[j].kind != Node::kList) throw Error("operations come before filters");
      r.filters.push_back(f.items[j]);
    }
    if (r.ops == std::vector<std::string>{"default"}) {
      if (!r.filters.empty()) throw Error("default takes no filter");
      impl_->default_allow = r.allow;
      continue;
    }
    if (std::count(r.ops.begin(), r.ops.end(), "default")) {
      throw Error("default stands alone in its rule");
    }
    impl_->rules.push_back(std::move(r));
  }
  if (!impl_->default_allow) throw Error("no (allow default) or (deny default)");
}

Profile::~Profile() = default;
Profile::Profile(Profile&&) noexcept = default;

bool Profile::Allows(const Query& q) const {
  if (!Operations().count(q.operation) || q.operation.back() == '*') {
    throw Error("query for an unknown or wildcard operation " + q.operation);
  }
  bool allow = *impl_->default_allow;
  for (const Rule& r : impl_->rules) {
    bool applies = false;
    for (const std::string& op : r.ops) applies = applies || OperationCovers(op, q.operation);
    if (!applies) continue;
    bool matched = r.filters.empty();
    for (const Node& f : r.filters) {
      if (matched) break;
      matched = Matches(f, q);
    }
    if (matched) allow = r.allow;  // the last matching rule decides
  }
  return allow;
}

std::vector<Profile::RuleInfo> Profile::Rules() const {
  std::vector<RuleInfo> out;
  for (const Rule& r : impl_->rules) out.push_back({r.allow, r.ops, r.filters.size()});
  return out;
}

}  // namespace ward::test::sbpl
