#include "importers/srt/srt.h"

#include <arpa/inet.h>
#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "importers/ward_writer.h"
#include "language/path_match.h"
#include "language/utf8.h"

namespace ward::importers {
namespace {

using nlohmann::json;

// srt 0.0.83's mandatory write denies (dist/sandbox/sandbox-utils.js:12-39):
// files and folders, anchored at srt's working directory.
const char* const kDangerousFiles[] = {".gitconfig",    ".gitmodules", ".bashrc",
                                       ".bash_profile", ".zshrc",      ".zprofile",
                                       ".profile",      ".ripgreprc",  ".mcp.json"};
const char* const kDangerousDirs[] = {".vscode", ".idea", ".claude/commands", ".claude/agents"};
// Paths srt always lets the sandbox write (sandbox-utils.js:499-557).
const char* const kAlwaysWritable[] = {"/dev/null",   "/dev/stdout",  "/dev/stderr",    "/dev/tty",
                                       "/tmp/claude", "~/.npm/_logs", "~/.claude/debug"};

// A path as Ward components: "/a/b" -> {"a", "b"}; "~/x" -> {"~", "x"}.
using Parts = std::vector<std::string>;

std::string Join(const Parts& parts) {
  if (!parts.empty() && parts[0] == "~") {
    std::string out = "~";
    for (size_t i = 1; i < parts.size(); ++i) out += "/" + parts[i];
    return out;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

bool IsGlobPart(const std::string& part) { return part.find('*') != std::string::npos; }

// Does Ward pattern `pattern` match `path` or one of its ancestors, as the
// IR decides it (language/path_match.h)?
bool Covers(const Parts& pattern, const Parts& path) {
  return PatternMatchesPathOrAncestor(Join(pattern), Join(path));
}

// Is `inner` (literal) strictly under or equal to `outer` (literal)?
bool Under(const Parts& inner, const Parts& outer) {
  return inner.size() >= outer.size() && std::equal(outer.begin(), outer.end(), inner.begin());
}

// A Ward string literal; its escapes are \" \\ \n \t \$ (Unsayable
// rules out what they cannot carry).
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      if (c == '"' || c == '\\' || c == '$') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}

// Why `s` cannot be a Ward string (other control characters, invalid
// UTF-8), or empty.
std::string Unsayable(const std::string& s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return "holds a control character";
  }
  return FindInvalidUtf8(s) == std::string::npos ? "" : "is not UTF-8";
}

struct PathRule {
  std::string rights;  // "read exec", "write", ...
  bool allow = true;
  Parts path;
  std::string origin;   // the JSON pointer that made it
  std::string comment;  // written above it, when set
};

class SrtImporter {
 public:
  SrtImporter(const ImportOptions& options, std::vector<ImportDiagnostic>* diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  bool Run(std::string_view text, std::string* out) {
    json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded())
      return Error("", "not valid JSON (srt reads its settings with JSON.parse)");
    if (!root.is_object()) return Error("", "the settings must be a JSON object");
    if (options_.cwd.empty() || options_.cwd[0] != '/') {
      return Error("",
                   "--cwd DIR (absolute) is required: srt resolves relative paths and its "
                   "mandatory write denies against the folder it runs in");
    }
    cwd_ = PathComponents(options_.cwd);
    for (const std::string& p : cwd_) {
      if (p == "." || p == ".." || IsGlobPart(p))
        return Error("", "--cwd must be a plain absolute path");
    }
    TopLevel(root);
    if (errors_ > 0) return false;
    Translate();
    if (errors_ > 0) return false;
    *out = Write();
    return true;
  }

 private:
  bool Error(const std::string& where, const std::string& message) {
    diagnostics_->push_back({Severity::kError, where, message});
    ++errors_;
    return false;
  }
  void Warn(const std::string& where, const std::string& message) {
    diagnostics_->push_back({Severity::kWarning, where, message});
    warnings_.push_back((where.empty() ? "" : "#" + where + ": ") + message);
  }

  // Keys srt 0.0.83's schema knows; zod strips the others without a word.
  void Unknown(const json& object, const std::string& at, const std::set<std::string>& known,
               bool strict) {
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (known.count(it.key())) continue;
      if (strict) {
        Error(at + "/" + it.key(),
              "unknown key '" + it.key() + "' (srt refuses unknown keys here)");
      } else {
        Warn(at + "/" + it.key(), "unknown key '" + it.key() +
                                      "': srt 0.0.83 ignores it without a word; not translated");
      }
    }
  }

  const json* Member(const json& object, const std::string& key, const std::string& at,
                     bool required) {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) Error(at, "missing '" + key + "' (srt requires it and refuses the file)");
      return nullptr;
    }
    return &*it;
  }

  std::vector<std::string> Strings(const json* value, const std::string& at) {
    std::vector<std::string> out;
    if (!value) return out;
    if (!value->is_array()) {
      Error(at, "must be an array of strings");
      return out;
    }
    for (size_t i = 0; i < value->size(); ++i) {
      if (!(*value)[i].is_string()) {
        Error(at + "/" + std::to_string(i), "must be a string");
        continue;
      }
      out.push_back((*value)[i].get<std::string>());
    }
    return out;
  }

  bool Bool(const json& object, const std::string& key, const std::string& at) {
    auto it = object.find(key);
    if (it == object.end()) return false;
    if (!it->is_boolean()) {
      Error(at + "/" + key, "must be true or false");
      return false;
    }
    return it->get<bool>();
  }

  void TopLevel(const json& root) {
    Unknown(
        root, "",
        {"network", "filesystem", "credentials", "ignoreViolations", "enableWeakerNestedSandbox",
         "allowNestedUserNamespaces", "enableWeakerNetworkIsolation", "allowAppleEvents", "ripgrep",
         "mandatoryDenySearchDepth", "allowPty", "seccomp", "bwrapPath", "socatPath",
         "javaAgentJarPath", "windows", "git"},
        false);
    const json* network = Member(root, "network", "", true);
    const json* filesystem = Member(root, "filesystem", "", true);
    if (network && !network->is_object()) Error("/network", "must be an object");
    if (filesystem && !filesystem->is_object()) Error("/filesystem", "must be an object");
    if (network && network->is_object()) Network(*network);
    if (filesystem && filesystem->is_object()) Filesystem(*filesystem);
    if (const json* c = Member(root, "credentials", "", false)) Credentials(*c);
    if (root.contains("ignoreViolations")) {
      Warn("/ignoreViolations", "filters srt's violation reports only; no Ward meaning");
    }
    for (const char* key : {"enableWeakerNestedSandbox", "allowNestedUserNamespaces",
                            "enableWeakerNetworkIsolation", "allowAppleEvents", "allowPty"}) {
      if (root.contains(key) && root[key] != false) {
        Warn(std::string("/") + key, std::string("'") + key +
                                         "' tunes srt's own sandbox on one platform; no Ward "
                                         "meaning (Ward's enforcers decide it)");
      }
    }
    for (const char* key :
         {"ripgrep", "seccomp", "bwrapPath", "socatPath", "javaAgentJarPath", "windows", "git"}) {
      if (root.contains(key)) {
        Warn(std::string("/") + key,
             std::string("'") + key + "' configures srt's helpers; no Ward meaning");
      }
    }
    if (auto it = root.find("mandatoryDenySearchDepth"); it != root.end()) {
      if (!it->is_number_integer() || *it < 1 || *it > 10) {
        Error("/mandatoryDenySearchDepth", "must be an integer from 1 to 10");
      } else {
        Warn("/mandatoryDenySearchDepth",
             "srt on Linux looks for the mandatory denies this deep only; Ward denies them at "
             "every depth (as srt on macOS does)");
      }
    }
  }

  // ---- network -------------------------------------------------------

  struct Host {
    std::string text;  // as Ward writes it: "\"github.com\"", "::1", "loopback", "any"
    int port = -1;
  };

  // srt's isValidDomainPattern (domain-pattern.js:80-114), with `:port`
  // (domain-pattern.js:38-75); `deny` also admits `*` and `*:port`.
  std::optional<Host> ParseHost(std::string entry, bool deny, const std::string& at) {
    Host host;
    auto bad = [&](const std::string& why) -> std::optional<Host> {
      Error(at, "'" + CommentText(entry) + "' " + why);
      return std::nullopt;
    };
    std::string name = entry;
    // `[v6]`, `[v6]:port`, `name:port`.
    std::string port_text;
    if (name.find("://") != std::string::npos || name.find('/') != std::string::npos) {
      return bad("is a URL or path, not a domain (srt refuses it)");
    }
    if (!name.empty() && name[0] == '[') {
      size_t close = name.find(']');
      if (close == std::string::npos) return bad("has no closing ']'");
      port_text = name.substr(close + 1);
      name = name.substr(1, close - 1);
      if (!port_text.empty()) {
        if (port_text[0] != ':') return bad("has text after ']'");
        port_text = port_text.substr(1);
        if (port_text.empty()) return bad("ends in ':' without a port");
      }
      if (size_t zone = name.find('%'); zone != std::string::npos) name = name.substr(0, zone);
      in6_addr a6;
      if (inet_pton(AF_INET6, name.c_str(), &a6) != 1) return bad("is not an IPv6 address");
      char buf[INET6_ADDRSTRLEN];
      inet_ntop(AF_INET6, &a6, buf, sizeof buf);
      host.text = buf;
    } else {
      size_t colon = name.find(':');
      if (colon != std::string::npos) {
        if (name.find(':', colon + 1) != std::string::npos) {
          return bad("is not valid: write an IPv6 address in brackets ([::1]:443)");
        }
        port_text = name.substr(colon + 1);
        name = name.substr(0, colon);
        if (port_text.empty()) return bad("ends in ':' without a port");
      }
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "*") {
        if (!deny) return bad("is too broad: srt refuses patterns like \"*.com\" or \"*\"");
        host.text = "any";
      } else if (lower == "localhost") {
        host.text = "loopback";
      } else if (lower.rfind("*.", 0) == 0) {
        const std::string rest = lower.substr(2);
        if (rest.find('.') == std::string::npos || rest.front() == '.' || rest.back() == '.' ||
            rest.find("..") != std::string::npos) {
          return bad("is too broad: srt refuses patterns like \"*.com\" or \"*\"");
        }
        if (rest.find('*') != std::string::npos) {
          // srt accepts it (the rest is not checked) but it can never match.
          return bad(
              "is accepted by srt but can never match a host (only a leading '*.' is a "
              "wildcard); write the domains it should cover");
        }
        host.text = Quoted(lower);
      } else if (lower.find('*') != std::string::npos) {
        return bad("is too broad: srt refuses patterns like \"*.com\" or \"*\"");
      } else if (lower.find('.') == std::string::npos || lower.front() == '.' ||
                 lower.back() == '.') {
        return bad("is not a domain srt accepts (a dotted name, an IP address or localhost)");
      } else {
        in_addr a4;
        host.text = inet_pton(AF_INET, lower.c_str(), &a4) == 1 ? lower : Quoted(lower);
      }
      // srt checks a pattern's shape only; a host it compares with has
      // passed /^[A-Za-z0-9._-]+$/ (parent-proxy.js:400-412). A pattern with
      // other characters, an empty or overlong label never matches there,
      // and Ward refuses it as a domain.
      if (host.text.size() > 2 && host.text[0] == '"') {
        const std::string name = lower.rfind("*.", 0) == 0 ? lower.substr(2) : lower;
        std::string why;
        if (name.size() > 253) why = "is longer than 253 characters";
        for (size_t start = 0; why.empty() && start <= name.size();) {
          size_t dot = std::min(name.find('.', start), name.size());
          const std::string label = name.substr(start, dot - start);
          if (label.empty()) why = "has an empty label";
          if (label.size() > 63) why = "has a label longer than 63 characters";
          if (!label.empty() && (label.front() == '-' || label.back() == '-')) {
            why = "has a label that starts or ends with '-'";
          }
          for (char c : label) {
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
              why = "has a character no host name has";
              break;
            }
          }
          start = dot + 1;
        }
        if (!why.empty()) {
          if (deny) {
            return bad(why +
                       ": srt accepts it but it never matches a host; write the domains "
                       "it should cover");
          }
          Warn(at, "'" + CommentText(entry) + "' " + why +
                       ": srt accepts it but it never matches a host; not translated");
          return std::nullopt;
        }
      }
    }
    if (!port_text.empty()) {
      bool digits = std::all_of(port_text.begin(), port_text.end(),
                                [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || port_text.size() > 5 || port_text[0] == '0' || std::stoi(port_text) > 65535) {
        return bad("has no valid port (1 to 65535, no leading zero)");
      }
      host.port = std::stoi(port_text);
    }
    return host;
  }

  void Network(const json& network) {
    Unknown(network, "/network", {"allowedDomains",
                                  "deniedDomains",
                                  "deniedDomainReasons",
                                  "strictAllowlist",
                                  "deniedResolvedAddresses",
                                  "allowUnixSockets",
                                  "allowAllUnixSockets",
                                  "allowLocalBinding",
                                  "allowMachLookup",
                                  "httpProxyPort",
                                  "socksProxyPort",
                                  "mitmProxy",
                                  "filterRequest",
                                  "allowPlaintextHeaderSet",
                                  "stripResponseHeaders",
                                  "refuseOpaqueTunnels",
                                  "requireHostMatch",
                                  "ambiguousRequestTarget",
                                  "tlsTerminate",
                                  "parentProxy"},
            false);
    const auto allowed =
        Strings(Member(network, "allowedDomains", "/network", true), "/network/allowedDomains");
    const auto denied =
        Strings(Member(network, "deniedDomains", "/network", true), "/network/deniedDomains");
    for (size_t i = 0; i < allowed.size(); ++i) {
      const std::string at = "/network/allowedDomains/" + std::to_string(i);
      if (auto h = ParseHost(allowed[i], false, at)) {
        net_.push_back({"allow tcp to " + h->text + Port(h->port), at});
      }
    }
    for (size_t i = 0; i < denied.size(); ++i) {
      const std::string at = "/network/deniedDomains/" + std::to_string(i);
      if (auto h = ParseHost(denied[i], true, at)) {
        net_.push_back({"deny to " + h->text + Port(h->port), at});
      }
    }
    const auto addresses = Strings(Member(network, "deniedResolvedAddresses", "/network", false),
                                   "/network/deniedResolvedAddresses");
    for (size_t i = 0; i < addresses.size(); ++i) {
      const std::string at = "/network/deniedResolvedAddresses/" + std::to_string(i);
      std::string a = addresses[i];
      std::string ip = a.substr(0, a.find('/'));
      in_addr a4;
      in6_addr a6;
      if (inet_pton(AF_INET, ip.c_str(), &a4) != 1 && inet_pton(AF_INET6, ip.c_str(), &a6) != 1) {
        Error(at, "'" + CommentText(a) + "' is not an IP address or CIDR");
        continue;
      }
      net_.push_back({"deny to " + a, at});
    }
    if (!addresses.empty()) {
      notes_.push_back(
          "deniedResolvedAddresses: srt refuses them as the answers for allowed names; Ward "
          "denies them outright (also an IP literal that allowedDomains lists: narrower)");
    }
    const auto sockets = Strings(Member(network, "allowUnixSockets", "/network", false),
                                 "/network/allowUnixSockets");
    for (size_t i = 0; i < sockets.size(); ++i) {
      const std::string at = "/network/allowUnixSockets/" + std::to_string(i);
      // srt normalises these as it does filesystem paths.
      const std::string& socket = sockets[i];
      if (socket.empty() || socket[0] == '~' || socket.find_first_of("*?[]") != std::string::npos ||
          !Unsayable(socket).empty()) {
        Warn(at, "'" + CommentText(socket) +
                     "': Ward names each unix socket by its absolute "
                     "path (no '~', no globs); not translated (narrower)");
        continue;
      }
      Parts parts = socket[0] == '/' ? Parts{} : cwd_;
      for (const std::string& p : PathComponents(socket)) {
        if (p == ".") continue;
        if (p == "..") {
          if (!parts.empty()) parts.pop_back();
          continue;
        }
        parts.push_back(p);
      }
      if (parts.empty()) {
        Warn(at, "'" + CommentText(socket) + "' names no socket; not translated");
        continue;
      }
      net_.push_back({"allow unix " + Quoted(Join(parts)), at});
      Warn(at,
           "srt (macOS only; Linux ignores the list) allows every socket under this path; "
           "Ward allows this socket only");
    }
    if (Bool(network, "allowAllUnixSockets", "/network")) {
      Warn("/network/allowAllUnixSockets",
           "Ward grants unix sockets one by one; not translated (narrower: no unix socket "
           "outside the list is reachable)");
    }
    if (Bool(network, "allowLocalBinding", "/network")) {
      net_.push_back({"allow tcp to loopback", "/network/allowLocalBinding"});
      net_.push_back({"allow ingress tcp from loopback", "/network/allowLocalBinding"});
      notes_.push_back(
          "allowLocalBinding: srt's macOS meaning (bind, accept and connect on "
          "loopback, any port); srt on Linux ignores it");
    }
    for (const char* key : {"httpProxyPort", "socksProxyPort"}) {
      if (network.contains(key)) {
        Warn(std::string("/network/") + key,
             "an external proxy that does its own filtering in srt; Ward enforces the domain "
             "lists itself and has no such proxy");
      }
    }
    for (const char* key :
         {"mitmProxy", "tlsTerminate", "parentProxy", "filterRequest", "allowPlaintextHeaderSet",
          "stripResponseHeaders", "refuseOpaqueTunnels", "requireHostMatch",
          "ambiguousRequestTarget", "allowMachLookup", "deniedDomainReasons", "strictAllowlist"}) {
      if (network.contains(key)) {
        Warn(std::string("/network/") + key,
             std::string("'") + key + "' tunes srt's proxy or its messages; no Ward meaning");
      }
    }
    notes_.push_back(
        "network: srt proxies TCP only (HTTP and SOCKS; no UDP, no DNS inside): allowedDomains "
        "become tcp grants, an entry without a port allows every port; under Ward the workload "
        "resolves names itself: grant your resolver (allow udp to R port 53)");
  }

  static std::string Port(int port) { return port < 0 ? "" : " port " + std::to_string(port); }

  // ---- filesystem ----------------------------------------------------

  // One PathEntry as Ward components, or nullopt (diagnosed). `deny`: the
  // entry narrows what srt grants, so dropping it would widen.
  std::optional<std::vector<Parts>> PathEntry(const json& entry, const std::string& at, bool deny) {
    std::string path;
    bool literal = false;
    if (entry.is_string()) {
      path = entry.get<std::string>();
    } else if (entry.is_object() && entry.contains("path") && entry["path"].is_string() &&
               entry.contains("literal") && entry["literal"] == true && entry.size() == 2) {
      path = entry["path"].get<std::string>();
      literal = true;
    } else {
      Error(at, "must be a path or {\"path\": ..., \"literal\": true}");
      return std::nullopt;
    }
    if (path.empty()) {
      Error(at, "is empty (srt refuses it)");
      return std::nullopt;
    }
    if (const std::string why = Unsayable(path); !why.empty()) {
      if (deny) {
        Error(at, "the path " + why + ", which a Ward policy cannot hold; dropping it would widen");
      } else {
        Warn(at,
             "the path " + why + ", which a Ward policy cannot hold; not translated (narrower)");
      }
      return std::nullopt;
    }
    const bool glob = !literal && path.find_first_of("*?[]") != std::string::npos;
    if (glob && deny && path.back() == '/') {
      Error(at, "a deny glob ending in '/' matches no path (srt refuses it)");
      return std::nullopt;
    }
    if (path.find('?') != std::string::npos || path.find('[') != std::string::npos ||
        path.find(']') != std::string::npos) {
      if (glob) {
        const std::string why = "uses '?' or '[...]', which Ward paths cannot say (W1046)";
        if (deny) {
          Error(at, "'" + CommentText(path) + "' " + why +
                        "; dropping it would widen: write "
                        "'*' or one path per alternative");
        } else {
          Warn(at, "'" + CommentText(path) + "' " + why + "; not translated (narrower)");
        }
        return std::nullopt;
      }
    }
    if (literal && path.find('*') != std::string::npos) {
      const std::string why = "is a literal path with '*', which Ward reads as a glob";
      if (deny) {
        Error(at, "'" + CommentText(path) + "' " + why + " (wider than srt's); not translated");
      } else {
        Warn(at, "'" + CommentText(path) + "' " + why + "; not translated (narrower)");
      }
      return std::nullopt;
    }
    // srt's normalizePathForSandbox (sandbox-utils.js:378-494): `~` and
    // `~/` are the home, anything else not absolute is relative to the cwd.
    Parts parts;
    if (path == "~" || path.rfind("~/", 0) == 0) {
      parts = {"~"};
      for (const std::string& p : PathComponents(path.substr(1))) parts.push_back(p);
    } else {
      if (path[0] == '~') {
        Warn(at, "'" + CommentText(path) +
                     "': srt does not expand ~user; read, as srt does, "
                     "relative to --cwd");
      }
      parts = path[0] == '/' ? Parts{} : cwd_;
      for (const std::string& p : PathComponents(path)) parts.push_back(p);
    }
    // `.` and `..` folded as path.resolve folds them; `dir/**` is `dir`.
    Parts folded;
    for (const std::string& p : parts) {
      if (p == ".") continue;
      if (p == "..") {
        if (!folded.empty() && folded.back() != "~") folded.pop_back();
        continue;
      }
      folded.push_back(p);
    }
    while (!folded.empty() && folded.back() == "**") folded.pop_back();
    for (const std::string& p : folded) {
      if (p.find("**") != std::string::npos && p != "**") {
        const std::string why =
            "puts '**' inside a name, which Ward paths cannot say ('**' is a whole component)";
        if (deny) {
          Error(at, "'" + CommentText(path) + "' " + why + "; dropping it would widen");
        } else {
          Warn(at, "'" + CommentText(path) + "' " + why + "; not translated (narrower)");
        }
        return std::nullopt;
      }
    }
    // srt's '*' may match nothing ("a*.txt" matches "a.txt"), Ward's never
    // does: each '*' inside a name also stands for its removal.
    std::vector<Parts> variants = {folded};
    size_t stars = 0;
    for (const std::string& p : folded) {
      if (p != "**") stars += static_cast<size_t>(std::count(p.begin(), p.end(), '*'));
    }
    if (stars > 4) {
      const std::string why = "has more than 4 '*' inside names (each needs a rule of its own)";
      if (deny) {
        Error(at, "'" + CommentText(path) + "' " + why);
      } else {
        Warn(at, "'" + CommentText(path) + "' " + why + "; not translated (narrower)");
      }
      return std::nullopt;
    }
    for (size_t c = 0; c < folded.size(); ++c) {
      const std::string& part = folded[c];
      if (part == "**" || part == "*") continue;
      std::vector<size_t> at_star;
      for (size_t k = 0; k < part.size(); ++k) {
        if (part[k] == '*') at_star.push_back(k);
      }
      if (at_star.empty()) continue;
      std::vector<std::string> spellings;
      for (size_t mask = 0; mask < (size_t{1} << at_star.size()); ++mask) {
        std::string spelled;
        for (size_t k = 0, n = 0; k < part.size(); ++k) {
          if (part[k] == '*' && (mask >> n++ & 1)) continue;
          spelled += part[k];
        }
        if (!spelled.empty()) spellings.push_back(spelled);
      }
      std::vector<Parts> more;
      for (const Parts& v : variants) {
        for (const std::string& spelled : spellings) {
          Parts w = v;
          w[c] = spelled;
          more.push_back(std::move(w));
        }
      }
      variants = std::move(more);
    }
    std::sort(variants.begin(), variants.end());
    variants.erase(std::unique(variants.begin(), variants.end()), variants.end());
    return variants;
  }

  std::vector<std::pair<Parts, std::string>> Paths(const json* list, const std::string& at,
                                                   bool deny) {
    std::vector<std::pair<Parts, std::string>> out;
    if (!list) return out;
    if (!list->is_array()) {
      Error(at, "must be an array");
      return out;
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string here = at + "/" + std::to_string(i);
      if (auto variants = PathEntry((*list)[i], here, deny)) {
        for (Parts& v : *variants) out.emplace_back(std::move(v), here);
      }
    }
    return out;
  }

  void Filesystem(const json& fs) {
    Unknown(fs, "/filesystem",
            {"disabled", "denyRead", "allowRead", "allowWrite", "denyWrite", "allowGitConfig"},
            false);
    disabled_ = Bool(fs, "disabled", "/filesystem");
    allow_git_config_ = Bool(fs, "allowGitConfig", "/filesystem");
    deny_read_ = Paths(Member(fs, "denyRead", "/filesystem", true), "/filesystem/denyRead", true);
    allow_read_ =
        Paths(Member(fs, "allowRead", "/filesystem", false), "/filesystem/allowRead", false);
    allow_write_ =
        Paths(Member(fs, "allowWrite", "/filesystem", true), "/filesystem/allowWrite", false);
    deny_write_ =
        Paths(Member(fs, "denyWrite", "/filesystem", true), "/filesystem/denyWrite", true);
    if (disabled_) {
      Warn("/filesystem/disabled",
           "srt drops every filesystem rule, its mandatory denies included: the policy allows "
           "reading, writing and running everything");
    }
  }

  void Credentials(const json& c) {
    if (!c.is_object()) {
      Error("/credentials", "must be an object");
      return;
    }
    Unknown(c, "/credentials", {"files", "envVars", "allowPlaintextInject", "awsPairs", "sigv4"},
            true);
    if (auto it = c.find("files"); it != c.end() && it->is_array()) {
      for (size_t i = 0; i < it->size(); ++i) {
        const json& f = (*it)[i];
        const std::string at = "/credentials/files/" + std::to_string(i);
        if (!f.is_object() || !f.contains("path") || !f.contains("mode")) {
          Error(at, "needs 'path' and 'mode'");
          continue;
        }
        if (f["mode"] == "deny") {
          if (auto v = PathEntry(f["path"], at + "/path", true)) {
            for (Parts& p : *v) credential_denies_.emplace_back(std::move(p), at);
          }
        } else {
          Error(at,
                "mode 'mask' hands the workload a stand-in that srt's proxy swaps for the "
                "secret; Ward cannot, and reading the file would then give the secret "
                "itself: use mode 'deny'");
        }
      }
    }
    if (auto it = c.find("envVars"); it != c.end() && it->is_array() && !it->empty()) {
      Error("/credentials/envVars",
            "srt removes or masks these variables; a Ward policy keeps variables by name "
            "(process { env allow [...] }): list the ones the workload may see instead");
    }
  }

  // ---- translation ---------------------------------------------------

  // Where srt's precedence differs from Ward's (most specific rule wins; on
  // a tie deny wins), the rules are adjusted so every decision stays srt's:
  //   writes: a denyWrite wins at any depth, so an allowWrite at or under a
  //     denyWrite is dropped, and a deny glob with '**' is repeated under
  //     every write root inside its fixed prefix;
  //   reads: an allowRead of the very path a denyRead names wins (the deny
  //     is dropped), a leaf glob deny beats directory allows (repeated
  //     under them as for writes).
  void Translate() {
    if (disabled_) {
      fs_.push_back({"read write exec", true, {}, "/filesystem/disabled", ""});
      return;
    }
    fs_.push_back({"read exec", true, {}, "", "srt leaves reads open"});
    // Mandatory write denies, at every depth below the cwd.
    std::vector<std::pair<Parts, std::string>> mandatory;
    auto add_mandatory = [&](const std::string& rel) {
      Parts p = cwd_;
      p.push_back("**");
      for (const std::string& s : PathComponents(rel)) p.push_back(s);
      mandatory.emplace_back(p, "");
    };
    for (const char* f : kDangerousFiles) add_mandatory(f);
    for (const char* d : kDangerousDirs) add_mandatory(d);
    add_mandatory(".git/hooks");
    if (!allow_git_config_) add_mandatory(".git/config");
    std::vector<std::pair<Parts, std::string>> denies = deny_write_;
    denies.insert(denies.end(), mandatory.begin(), mandatory.end());

    // Writes.
    std::vector<std::pair<Parts, std::string>> roots;
    for (const auto& [w, at] : allow_write_) {
      const std::pair<Parts, std::string>* by = nullptr;
      for (const auto& d : denies) {
        if (!IsGlob(w) && Covers(d.first, w)) {
          by = &d;
          break;
        }
      }
      if (by) {
        const std::string who = by->second.empty() ? "a mandatory deny" : "#" + by->second;
        notes_.push_back("#" + at + " " + Join(w) + " is under " + who + " (" + Join(by->first) +
                         "): srt's denyWrite wins at any depth; not granted");
        continue;
      }
      roots.emplace_back(w, at);
    }
    for (const auto& root : roots) {
      const Parts& w = root.first;
      const bool hidden = std::any_of(deny_read_.begin(), deny_read_.end(),
                                      [&](const auto& d) { return Covers(d.first, w); });
      // srt binds a write root back into a folder it hides from reads.
      fs_.push_back({hidden ? "read write exec" : "write", true, w, root.second, ""});
    }
    for (const char* p : kAlwaysWritable) {
      Parts w = p[0] == '~' ? Parts{"~"} : Parts{};
      for (const std::string& s :
           PathComponents(p[0] == '~' ? std::string(p + 1) : std::string(p))) {
        w.push_back(s);
      }
      fs_.push_back({"write", true, w, "", "srt always lets the sandbox write here"});
    }
    std::vector<Parts> write_roots;
    for (const auto& r : roots) write_roots.push_back(r.first);
    write_roots.push_back(cwd_);
    EmitDenies(denies, write_roots, "write");

    // Reads.
    std::set<Parts> allowed_read;
    for (const auto& [a, at] : allow_read_) {
      allowed_read.insert(a);
      fs_.push_back({"read exec", true, a, at, ""});
    }
    std::vector<std::pair<Parts, std::string>> read_denies;
    for (const auto& d : deny_read_) {
      if (allowed_read.count(d.first)) {
        notes_.push_back("#" + d.second + " " + Join(d.first) +
                         " is also in allowRead, which srt lets win; not denied");
        continue;
      }
      read_denies.push_back(d);
    }
    // A credential deny holds whatever allowRead says (linux-sandbox-utils.js:1809).
    read_denies.insert(read_denies.end(), credential_denies_.begin(), credential_denies_.end());
    std::vector<Parts> read_roots;
    for (const auto& a : allow_read_) read_roots.push_back(a.first);
    for (const auto& r : roots) read_roots.push_back(r.first);
    EmitDenies(read_denies, read_roots, "read exec");
  }

  static bool IsGlob(const Parts& p) {
    return std::any_of(p.begin(), p.end(), [](const std::string& s) { return IsGlobPart(s); });
  }

  // Emits each deny, and again under every root inside its fixed prefix
  // when it has a '**' (so a deeper allow cannot outrank it).
  void EmitDenies(const std::vector<std::pair<Parts, std::string>>& denies,
                  const std::vector<Parts>& roots, const std::string& rights) {
    std::set<Parts> done;
    for (const auto& [d, at] : denies) {
      if (!done.insert(d).second) continue;
      fs_.push_back({rights, false, d, at,
                     at.empty() ? "srt's mandatory denies: at every depth below --cwd, and again "
                                  "under each write root there"
                                : ""});
      auto star = std::find(d.begin(), d.end(), "**");
      if (star == d.end()) continue;
      const Parts prefix(d.begin(), star);
      if (IsGlob(prefix)) continue;
      const Parts suffix(std::next(star), d.end());
      for (const Parts& r : roots) {
        if (r.size() <= prefix.size() || !Under(r, prefix) || IsGlob(r)) continue;
        Parts again = r;
        again.push_back("**");
        again.insert(again.end(), suffix.begin(), suffix.end());
        if (!done.insert(again).second) continue;
        fs_.push_back({rights, false, again, at, ""});
      }
    }
  }

  std::string Write() const {
    std::string out = "ward 1\n\n";
    out += "// Imported by `ward import --from srt` from " + CommentText(options_.source) +
           " (srt 0.0.83 settings),\n";
    out += "// with --cwd " + CommentText(options_.cwd) +
           ". srt's precedence is kept: reads are "
           "open, an\n// allowRead wins over a denyRead of the same path, a denyWrite wins at "
           "any depth.\n";
    if (!warnings_.empty()) {
      out += "//\n// Not translated (warnings):\n";
      for (const std::string& w : warnings_) out += "// - " + CommentText(w) + "\n";
    }
    if (!notes_.empty()) {
      out += "//\n// Notes:\n";
      for (const std::string& n : notes_) out += "// - " + CommentText(n) + "\n";
    }
    out += "\nimport \"std/linux.ward\"\n\n";
    out += "policy " + options_.name + " extends linux-base {\n";
    out += "  filesystem {\n";
    // Rules without an origin of their own (srt's implicit ones) and the
    // same rights are written as one list.
    for (size_t i = 0; i < fs_.size();) {
      const PathRule& r = fs_[i];
      if (!r.comment.empty()) out += "    // " + r.comment + "\n";
      const std::string head =
          std::string("    ") + (r.allow ? "allow " : "deny ") + r.rights + " ";
      out += head + Quoted(Join(r.path));
      size_t j = i + 1;
      if (r.origin.empty()) {
        for (; j < fs_.size() && fs_[j].origin.empty() && fs_[j].allow == r.allow &&
               fs_[j].rights == r.rights && (fs_[j].comment.empty() || fs_[j].comment == r.comment);
             ++j) {
          out += ",\n" + std::string(head.size(), ' ') + Quoted(Join(fs_[j].path));
        }
      }
      out += (r.origin.empty() ? "" : "  // #" + r.origin) + "\n";
      i = j;
    }
    out += "  }\n";
    out += "  network {\n";
    for (const auto& [rule, at] : net_) out += "    " + rule + "  // #" + at + "\n";
    out += "  }\n";
    out += "}\n";
    return out;
  }

  const ImportOptions& options_;
  std::vector<ImportDiagnostic>* diagnostics_;
  size_t errors_ = 0;
  Parts cwd_;
  std::vector<std::string> warnings_, notes_;
  bool disabled_ = false, allow_git_config_ = false;
  std::vector<std::pair<Parts, std::string>> deny_read_, allow_read_, allow_write_, deny_write_,
      credential_denies_;
  std::vector<PathRule> fs_;
  std::vector<std::pair<std::string, std::string>> net_;
};

}  // namespace

ImportResult ImportSrt(std::string_view json, const ImportOptions& options) {
  ImportResult result;
  result.ok = SrtImporter(options, &result.diagnostics).Run(json, &result.text);
  return result;
}

}  // namespace ward::importers
