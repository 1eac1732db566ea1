#include "enforcers/linux/nftables.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <nftables/libnftables.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "backends/nftables/ruleset.h"

namespace ward::enforce {
namespace {

using json = nlohmann::json;
namespace nft = backend::nftables;

constexpr const char* kNftCgroupRoot = "/sys/fs/cgroup";

// libnftables, loaded when a command first needs it rather than by the
// dynamic linker at every start: with its dependencies (libnftnl, libmnl,
// libxtables, libjansson, libgmp) it was ~1.5 ms of every `ward` start,
// `ward run` included, which never loads a ruleset. The prototypes are the
// header's, so a changed signature fails the build.
struct NftApi {
  decltype(&nft_ctx_new) ctx_new = nullptr;
  decltype(&nft_ctx_free) ctx_free = nullptr;
  decltype(&nft_ctx_output_set_flags) output_set_flags = nullptr;
  decltype(&nft_ctx_buffer_output) buffer_output = nullptr;
  decltype(&nft_ctx_buffer_error) buffer_error = nullptr;
  decltype(&nft_run_cmd_from_buffer) run_cmd_from_buffer = nullptr;
  decltype(&nft_ctx_get_output_buffer) get_output_buffer = nullptr;
  decltype(&nft_ctx_get_error_buffer) get_error_buffer = nullptr;
};

// The library's soname (the ABI of the headers built against).
constexpr const char* kLibNftables = "libnftables.so.1";

const NftApi* Nft(std::string* error) {
  static NftApi api;
  static std::string load_error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen(kLibNftables, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      load_error = std::string("cannot load ") + kLibNftables + ": " + (why ? why : "?") +
                   " (Debian: apt-get install libnftables1)";
      return;
    }
    bool ok = true;
    auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && ok) {
        load_error = std::string(kLibNftables) + " has no " + name;
        ok = false;
      }
    };
    bind(api.ctx_new, "nft_ctx_new");
    bind(api.ctx_free, "nft_ctx_free");
    bind(api.output_set_flags, "nft_ctx_output_set_flags");
    bind(api.buffer_output, "nft_ctx_buffer_output");
    bind(api.buffer_error, "nft_ctx_buffer_error");
    bind(api.run_cmd_from_buffer, "nft_run_cmd_from_buffer");
    bind(api.get_output_buffer, "nft_ctx_get_output_buffer");
    bind(api.get_error_buffer, "nft_ctx_get_error_buffer");
    if (!ok) api = NftApi{};  // the library stays loaded; nothing uses it
  });
  if (!api.ctx_new) {
    *error = load_error;
    return nullptr;
  }
  return &api;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The table's JSON listing; false when absent (error empty) or unreadable.
bool ListTable(const std::string& table, json* out, std::string* error) {
  std::string text;
  if (!RunNft("list table inet " + table, false, true, &text, error)) {
    if (error->find("No such file or directory") != std::string::npos) error->clear();
    return false;
  }
  *out = json::parse(text, nullptr, false);
  if (out->is_discarded()) {
    *error = "libnftables printed JSON that does not parse";
    return false;
  }
  return true;
}

// A `socket cgroupv2` value as listed: a path that libnftables found under
// /sys/fs/cgroup, or the bare id when it found none.
void ReadCgroup(const json& right, Enforcement* e) {
  if (right.is_number_unsigned()) {
    e->cgroup_id = right.get<uint64_t>();
    return;
  }
  if (!right.is_string()) return;
  const std::string path = std::string(kNftCgroupRoot) + "/" + right.get<std::string>();
  struct stat st;
  if (stat(path.c_str(), &st) == 0) e->cgroup_id = st.st_ino;
  std::string ignored;
  const std::string mount = CgroupV2Mount(&ignored);
  if (!mount.empty() && path.compare(0, mount.size(), mount) == 0) {
    e->cgroup = path.size() > mount.size() ? path.substr(mount.size() + 1) : "";
  }
}

// Reads one ward table back: generation, scope, elements.
Enforcement Interpret(const std::string& table, const json& listing) {
  Enforcement e;
  e.enforcer = "nftables";
  e.table = table;
  e.policy = table.substr(5);
  for (const json& item : listing.value("nftables", json::array())) {
    if (item.contains("set")) {
      e.elements += item["set"].value("elem", json::array()).size();
      continue;
    }
    if (!item.contains("rule")) continue;
    const json& rule = item["rule"];
    const std::string chain = rule.value("chain", "");
    for (const json& x : rule.value("expr", json::array())) {
      if (chain == "allow" && x.contains("mangle")) {
        e.generation = x["mangle"].value("value", 0u);
      }
      if ((chain != "output" && chain != "input") || !x.contains("match")) continue;
      const json& left = x["match"]["left"];
      const json& right = x["match"]["right"];
      if (left.contains("socket") && left["socket"].value("key", "") == "cgroupv2") {
        e.scope = Target::Kind::kCgroup;
        ReadCgroup(right, &e);
      } else if (left.contains("meta")) {
        const std::string key = left["meta"].value("key", "");
        if (key == "skuid" && right.is_number()) {
          e.scope = Target::Kind::kUid;
          e.uid = right.get<uint32_t>();
        } else if ((key == "iifname" || key == "oifname") && right.is_string()) {
          e.scope = Target::Kind::kInterface;
          e.interface = right.get<std::string>();
        }
      }
    }
  }
  return e;
}

class Nftables final : public NetworkEnforcer {
 public:
  std::string_view name() const override { return "nftables"; }

  bool Apply(const ir::Policy& policy, const Target& target, const ApplyOptions& apply,
             DiagnosticSink& sink, std::string* error) const override {
    if (!HasCapability(CAP_NET_ADMIN)) {
      *error = "needs CAP_NET_ADMIN to load nftables rules (run as root)";
      return false;
    }
    nft::Scope scope;
    std::optional<Cgroup> cgroup;
    switch (target.kind) {
      case Target::Kind::kCgroup:
        if (!HasCapability(CAP_SYS_ADMIN)) {
          *error = "needs CAP_SYS_ADMIN for a cgroup scope (run as root)";
          return false;
        }
        cgroup = ResolveCgroup(target.cgroup, error);
        if (!cgroup) return false;
        scope.kind = nft::Scope::Kind::kCgroup;
        scope.cgroup_path = cgroup->relative;
        scope.cgroup_level = cgroup->level;
        break;
      case Target::Kind::kUid: {
        scope.kind = nft::Scope::Kind::kUid;
        scope.uid = target.uid;
        // `meta skuid` on input sees only sockets the kernel attached early
        // (established TCP, connected UDP): what the uid scope cannot decide,
        // whatever the policy (README.md, Scope).
        Span span;
        for (const ir::FlatRule& r : policy.network.rules) {
          if (r.direction == ir::Direction::kIngress) {
            span = r.span;
            break;
          }
        }
        sink.Warning(Code::kCannotExpress, span,
                     "the uid scope cannot see inbound datagrams to unconnected UDP sockets: they "
                     "are delivered whatever the ingress rules say (only the answers are "
                     "refused), and a refused inbound TCP connect is dropped, not reset",
                     "apply the policy to a cgroup (--cgroup) to enforce ingress");
        break;
      }
      case Target::Kind::kInterface:
        if (target.interface.empty() || target.interface.size() >= 16 ||
            target.interface.find_first_of("\"\\ /") != std::string::npos) {
          *error = "bad interface name '" + target.interface + "'";
          return false;
        }
        scope.kind = nft::Scope::Kind::kInterface;
        scope.interface = target.interface;
        break;
    }
    // A tap carries whatever the VM sends: only a host scope misses sockets.
    if (scope.kind != nft::Scope::Kind::kInterface) WarnNonIpSockets("nftables", sink);
    const std::string table = nft::TableName(policy.name);
    // The next generation: flows the previous one allowed are looked up again.
    nft::RenderOptions options;
    options.scope = scope;
    options.render_json = false;
    json listing;
    if (ListTable(table, &listing, error)) {
      options.generation = Interpret(table, listing).generation + 1;
    } else if (!error->empty()) {
      return false;
    }
    if (apply.resolve_domains && nft::HasResolvableDomains(policy)) {
      options.resolved = ResolveDomainGrants(policy, apply.dns, sink);
    }
    if (apply.resolved) *apply.resolved = options.resolved;
    nft::Ruleset ruleset;
    if (!nft::RenderRuleset(policy, options, &ruleset, sink)) return false;
    const bool loaded = cgroup && cgroup->mount != kNftCgroupRoot
                            ? RunNftInCgroupView(ruleset.text, cgroup->mount, error)
                            : RunNft(ruleset.text, false, false, nullptr, error);
    if (!loaded) return false;
    if (!cgroup) return true;
    // The kernel holds a cgroup id: check it is the one the user named.
    if (!ListTable(table, &listing, error)) {
      if (error->empty()) *error = "table " + table + " vanished after loading";
      return false;
    }
    const Enforcement e = Interpret(table, listing);
    if (e.cgroup_id != cgroup->id) {
      std::string ignored;
      RunNft(nft::RemoveText(table), false, false, nullptr, &ignored);
      *error = "the loaded rules name cgroup id " + std::to_string(e.cgroup_id) + ", not " +
               std::to_string(cgroup->id) + " (" + cgroup->relative + "); removed";
      return false;
    }
    return true;
  }

  bool RefreshDomains(const ir::Policy& policy, const ApplyOptions& apply, DiagnosticSink& sink,
                      uint32_t* next_seconds, std::string* error) const override {
    if (!HasCapability(CAP_NET_ADMIN)) {
      *error = "needs CAP_NET_ADMIN to change nftables sets (run as root)";
      return false;
    }
    const std::string table = nft::TableName(policy.name);
    json listing;
    if (!ListTable(table, &listing, error)) {
      if (error->empty()) *error = "policy " + policy.name + " is not applied with nftables";
      return false;
    }
    const std::vector<nft::ResolvedAddress> answers = ResolveDomainGrants(policy, apply.dns, sink);
    *next_seconds = RefreshSeconds(answers, apply.dns);
    const std::string text = nft::DomainRefreshText(policy, answers);
    if (text.empty()) return true;  // no resolvable grant
    // One transaction: the sets go from the old answers to the new ones.
    return RunNft(text, false, false, nullptr, error);
  }

  bool Remove(const std::string& policy, bool* removed, std::string* error) const override {
    if (!HasCapability(CAP_NET_ADMIN)) {
      *error = "needs CAP_NET_ADMIN to remove nftables rules (run as root)";
      return false;
    }
    const std::string table = nft::TableName(policy);
    json listing;
    *removed = ListTable(table, &listing, error);
    if (!*removed && !error->empty()) return false;
    return RunNft(nft::RemoveText(table), false, false, nullptr, error);
  }

  bool Status(std::vector<Enforcement>* out, std::string* error) const override {
    if (!HasCapability(CAP_NET_ADMIN)) {
      *error = "needs CAP_NET_ADMIN to read nftables rules (run as root)";
      return false;
    }
    std::string text;
    if (!RunNft("list tables inet", false, true, &text, error)) return false;
    const json tables = json::parse(text, nullptr, false);
    if (tables.is_discarded()) {
      *error = "libnftables printed JSON that does not parse";
      return false;
    }
    std::vector<std::string> names;
    for (const json& item : tables.value("nftables", json::array())) {
      if (!item.contains("table")) continue;
      const std::string name = item["table"].value("name", "");
      if (name.rfind("ward_", 0) == 0 && name.size() > 5) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      json listing;
      if (!ListTable(name, &listing, error)) {
        if (!error->empty()) return false;
        continue;  // removed meanwhile
      }
      out->push_back(Interpret(name, listing));
    }
    return true;
  }
};

}  // namespace

bool RunNft(const std::string& commands, bool json_input, bool json_output, std::string* output,
            std::string* error) {
  const NftApi* nft = Nft(error);
  if (!nft) return false;
  std::unique_ptr<nft_ctx, void (*)(nft_ctx*)> ctx(nft->ctx_new(NFT_CTX_DEFAULT), nft->ctx_free);
  if (!ctx) {
    *error = "libnftables: cannot create a context";
    return false;
  }
  // JSON input is recognised only with JSON output switched on.
  if (json_input || json_output) nft->output_set_flags(ctx.get(), NFT_CTX_OUTPUT_JSON);
  nft->buffer_output(ctx.get());
  nft->buffer_error(ctx.get());
  const int rc = nft->run_cmd_from_buffer(ctx.get(), commands.c_str());
  if (output) *output = nft->get_output_buffer(ctx.get());
  if (rc != 0) {
    *error = Trim(nft->get_error_buffer(ctx.get()));
    if (error->empty()) *error = "libnftables refused the commands";
    return false;
  }
  return true;
}

bool RunNftInCgroupView(const std::string& commands, const std::string& cgroup_mount,
                        std::string* error) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *error = "pipe: " + std::string(strerror(errno));
    return false;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    *error = "fork: " + std::string(strerror(errno));
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return false;
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    std::string message;
    bool ok = false;
    if (unshare(CLONE_NEWNS) != 0) {
      message = "unshare(CLONE_NEWNS): " + std::string(strerror(errno));
    } else if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
      message = "making / a slave mount: " + std::string(strerror(errno));
    } else if (mount(cgroup_mount.c_str(), kNftCgroupRoot, nullptr, MS_BIND | MS_REC, nullptr) !=
               0) {
      message = "binding " + cgroup_mount + " at " + kNftCgroupRoot + ": " + strerror(errno);
    } else {
      ok = RunNft(commands, false, false, nullptr, &message);
    }
    const std::string report = (ok ? "1" : "0") + message;
    ssize_t ignored = write(pipe_fds[1], report.data(), report.size());
    (void)ignored;
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    report.append(buf, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (report.empty() || !WIFEXITED(status)) {
    *error = "the libnftables child died without reporting";
    return false;
  }
  if (report[0] != '1') {
    *error = report.substr(1);
    return false;
  }
  return true;
}

const NetworkEnforcer& NftablesEnforcer() {
  static const Nftables enforcer;
  return enforcer;
}

}  // namespace ward::enforce
