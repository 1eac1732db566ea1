#include "importers/docker_seccomp/docker_seccomp.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "importers/docker_seccomp/docker_arches.h"
#include "importers/docker_seccomp/docker_conditions.h"
#include "importers/docker_seccomp/docker_profile.h"
#include "importers/ward_writer.h"
#include "language/constants.h"
#include "language/literals.h"
#include "language/syscall_facts.h"

namespace ward::importers {
namespace {

constexpr int kEperm = 1;
constexpr int kEnosys = 38;
constexpr uint32_t kMaxErrno = 4095;

// An action as Ward reads it, and as runc compares it with the default
// (the libseccomp action value: a rule equal to the default is skipped).
struct Action {
  WardAction ward;
  uint32_t runc = 0;
};

struct Variant {
  std::optional<Arch> host;  // decides includes/excludes.arches
  std::vector<Arch> arches;  // the policy's `arch` list; empty: none written
  std::string name;
};

// ---- one syscall's decision ---------------------------------------------

using Conjunction = std::map<int, std::vector<Cube>>;  // argument -> cubes

struct Conditional {
  size_t entry = 0;
  Action action;
  Alternatives alternatives;                        // {{}}: every call
  std::map<Arch, std::vector<Conjunction>> unions;  // per architecture
  bool Always() const { return alternatives.size() == 1 && alternatives[0].empty(); }
};

struct Decision {
  std::optional<size_t> unconditional;  // the entry deciding every call
  std::vector<Conditional> conditional;
  bool filler = false;  // an explicit rule with the default (bypass classes)
};

bool Overlap(const Conjunction& a, const Conjunction& b) {
  for (const auto& [arg, cubes] : a) {
    auto other = b.find(arg);
    if (other != b.end() && !Intersect(cubes, other->second)) return false;
  }
  return true;
}

bool Overlap(const Conditional& a, const Conditional& b) {
  for (const auto& [arch, conjunctions] : a.unions) {
    auto other = b.unions.find(arch);
    if (other == b.unions.end()) continue;
    for (const Conjunction& x : conjunctions) {
      for (const Conjunction& y : other->second) {
        if (Overlap(x, y)) return true;
      }
    }
  }
  return false;
}

Alternatives Product(const Alternatives& a, const Alternatives& b) {
  Alternatives out;
  for (const auto& x : a) {
    for (const auto& y : b) {
      std::vector<std::string> both = x;
      both.insert(both.end(), y.begin(), y.end());
      out.push_back(std::move(both));
    }
  }
  return out;
}

// The bypass-prone syscalls Ward closes unless a rule names them
// (compiler/syscalls.h, "Bypass classes").
constexpr const char* kBypassProne[] = {"io_uring_setup", "io_uring_enter", "io_uring_register",
                                        "clone3",         "socketcall",     "ipc"};

// What Ward gives a closed bypass-prone syscall where no rule naming it
// matches.
WardAction Fallback(const std::string& name, const WardAction& def) {
  const bool runs = def.kind == WardActionKind::kAllow || def.kind == WardActionKind::kLog;
  if (name == "clone3" || runs) return {WardActionKind::kErrno, kEnosys};
  return def;
}

std::string EntryWhere(size_t i) { return "/syscalls/" + std::to_string(i); }

class Importer {
 public:
  Importer(const DockerProfile& profile, const DockerImportOptions& options,
           std::vector<ImportDiagnostic>* diagnostics)
      : profile_(profile), options_(options), diagnostics_(diagnostics) {}

  bool Run(std::string* text, std::vector<RuleOrigin>* origins) {
    if (!Validate()) return false;
    std::vector<Variant> variants = Variants();
    if (variants.empty()) return false;
    std::vector<WardPolicy> policies;
    std::vector<std::pair<const Variant*, std::vector<ImportDiagnostic>>> failed;
    for (const Variant& v : variants) {
      std::vector<ImportDiagnostic> errors;
      variant_errors_ = &errors;
      WardPolicy p;
      const bool ok = Translate(v, &p);
      variant_errors_ = nullptr;
      if (ok) {
        policies.push_back(std::move(p));
      } else {
        failed.emplace_back(&v, std::move(errors));
      }
    }
    // A host whose policy cannot be written is left out when others can.
    for (const auto& [v, errors] : failed) {
      for (const ImportDiagnostic& e : errors) {
        if (policies.empty()) {
          Error(e.where, e.message);
        } else {
          Warning(e.where,
                  "no policy for " + std::string(ArchName(*v->host)) + " hosts: " + e.message);
        }
      }
    }
    if (errors_ > 0) return false;
    *text = WriteWard(Header(policies.size()), policies, origins);
    return true;
  }

 private:
  // While a variant is translated, its errors are collected apart: Run()
  // decides whether they fail the import.
  void Error(const std::string& where, std::string message) {
    if (variant_errors_) {
      variant_errors_->push_back({Severity::kError, where, std::move(message)});
      return;
    }
    ++errors_;
    Report(Severity::kError, where, std::move(message));
  }
  void Warning(const std::string& where, std::string message) {
    Report(Severity::kWarning, where, std::move(message));
  }
  void Report(Severity s, const std::string& where, std::string message) {
    for (const ImportDiagnostic& d : *diagnostics_) {
      if (d.where == where && d.message == message) return;  // once, whatever the variants
    }
    diagnostics_->push_back({s, where, std::move(message)});
  }

  // ---- validation: what Docker or runc refuse, whatever the host ---------

  bool Validate() {
    if (!IsIdentifier(options_.name)) {
      Error("", "'" + options_.name + "' is not a valid policy name");
    }
    for (const std::string& cap : options_.capabilities) {
      if (!LookupCapability(cap)) Error("", "unknown capability '" + cap + "'");
    }
    if (profile_.default_action.empty()) {
      if (!profile_.syscalls.empty()) {
        Error("/defaultAction", "the profile has syscall rules but no defaultAction");
      } else {
        disabled_ = true;
        Warning("",
                "with no defaultAction and no syscalls, Docker runs the container "
                "unconfined; the policy allows every call (Ward still kills other "
                "architectures)");
      }
    }
    if (disabled_) {
      default_ = {{WardActionKind::kAllow, 0}, 0x7fff0000};
    } else if (!profile_.default_action.empty()) {
      default_ = ParseAction(profile_.default_action, profile_.default_errno_ret, "/defaultAction",
                             "/defaultErrnoRet");
    }
    if (!profile_.architectures.empty() && !profile_.arch_map.empty()) {
      Error("", "'architectures' and 'archMap' are both given; Docker refuses the profile");
    }
    for (size_t i = 0; i < profile_.architectures.size(); ++i) {
      CheckArch(profile_.architectures[i], "/architectures/" + std::to_string(i));
    }
    for (size_t i = 0; i < profile_.arch_map.size(); ++i) {
      const std::string where = "/archMap/" + std::to_string(i);
      CheckArch(profile_.arch_map[i].arch, where + "/architecture");
      for (size_t j = 0; j < profile_.arch_map[i].sub_arches.size(); ++j) {
        CheckArch(profile_.arch_map[i].sub_arches[j],
                  where + "/subArchitectures/" + std::to_string(j));
      }
    }
    if (!profile_.flags.empty()) {
      Warning("/flags", "seccomp flags are not imported: Ward has no equivalent");
    }
    if (!profile_.listener_path.empty()) {
      Warning("/listenerPath", "listenerPath is not imported: notify rules need an agent");
    }
    for (size_t i = 0; i < profile_.syscalls.size(); ++i) ValidateEntry(i);
    return errors_ == 0;
  }

  void CheckArch(const std::string& name, const std::string& where) {
    const OciArch* a = FindOciArch(name);
    if (!a) {
      Error(where, "unknown architecture '" + name + "'");
    } else if (!a->ward) {
      Warning(where, name +
                         " is not imported: Ward kills every architecture a policy does not "
                         "list, and the x32 ABI always");
    }
  }

  void ValidateEntry(size_t i) {
    const DockerSyscall& s = profile_.syscalls[i];
    const std::string where = EntryWhere(i);
    entry_actions_.push_back(
        ParseAction(s.action, s.errno_ret, where + "/action", where + "/errnoRet"));
    if (s.names.empty()) Warning(where, "the entry names no syscall");
    for (const DockerArg& a : s.args) {
      if (a.index > 5)
        Error(a.where + "/index",
              "argument index " + std::to_string(a.index) + " is out of range 0-5");
      if (!DockerPredicate(a.op, 0, 0, 64, 64))
        Error(a.where + "/op", "unknown operator '" + a.op + "'");
    }
  }

  Action ParseAction(const std::string& name, std::optional<uint64_t> errno_ret,
                     const std::string& where, const std::string& errno_where) {
    // runc passes errnoRet as an int16 to libseccomp, which keeps 16 bits;
    // the kernel caps the errno at 4095.
    const uint32_t data = errno_ret ? static_cast<uint32_t>(*errno_ret & 0xffff) : kEperm;
    const bool with_data = name == "SCMP_ACT_ERRNO" || name == "SCMP_ACT_TRACE";
    if (errno_ret && !with_data) {
      Warning(errno_where, "errnoRet is ignored with " + name);
    }
    if (name == "SCMP_ACT_ALLOW") return {{WardActionKind::kAllow, 0}, 0x7fff0000};
    if (name == "SCMP_ACT_LOG") return {{WardActionKind::kLog, 0}, 0x7ffc0000};
    if (name == "SCMP_ACT_NOTIFY") return {{WardActionKind::kNotify, 0}, 0x7fc00000};
    if (name == "SCMP_ACT_TRAP") return {{WardActionKind::kTrap, 0}, 0x00030000};
    if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD") {
      return {{WardActionKind::kKillThread, 0}, 0};  // runc reads SCMP_ACT_KILL as kill-thread
    }
    if (name == "SCMP_ACT_KILL_PROCESS") return {{WardActionKind::kKill, 0}, 0x80000000};
    if (name == "SCMP_ACT_ERRNO") {
      if (data == 0) {
        Error(errno_where,
              "errnoRet 0 makes the call return 0 without running it; Ward cannot "
              "express that");
      } else if (errno_ret && *errno_ret != std::min(data, kMaxErrno)) {
        Warning(errno_where, "errnoRet " + std::to_string(*errno_ret) + " reaches the caller as " +
                                 std::to_string(std::min(data, kMaxErrno)));
      }
      return {{WardActionKind::kErrno, static_cast<int>(std::max(1u, std::min(data, kMaxErrno)))},
              0x00050000 | data};
    }
    if (name == "SCMP_ACT_TRACE") {
      Warning(where,
              "SCMP_ACT_TRACE is imported as errno ENOSYS, what the kernel answers "
              "when no tracer is attached");
      return {{WardActionKind::kErrno, kEnosys}, 0x7ff00000 | data};
    }
    Error(where, "unknown action '" + name + "'");
    return {};
  }

  // ---- variants: one policy per host architecture when the profile's
  // meaning depends on it ------------------------------------------------

  std::vector<Arch> WardArches(const std::vector<std::string>& names) const {
    std::vector<Arch> out;
    for (const std::string& n : names) {
      const OciArch* a = FindOciArch(n);
      if (a && a->ward) AddArch(&out, *a->ward);
    }
    return out;
  }

  std::vector<Variant> Variants() {
    std::vector<Variant> out;
    if (!profile_.arch_map.empty()) {
      for (const DockerArchMap& m : profile_.arch_map) {
        const OciArch* a = FindOciArch(m.arch);
        if (!a || !a->ward) continue;
        bool seen = false;
        for (const Variant& v : out) seen |= v.host == a->ward;
        if (seen) continue;  // Docker takes the first entry for a host
        Variant v{a->ward, WardArches(m.sub_arches), ""};
        AddArch(&v.arches, *a->ward);
        out.push_back(std::move(v));
      }
      if (out.empty()) {
        Error("/archMap", "no archMap entry is for an architecture Ward compiles for");
      }
    } else {
      const std::vector<Arch> listed = WardArches(profile_.architectures);
      std::vector<Arch> hosts;
      if (ArchConditions(&hosts)) {
        if (!listed.empty()) hosts = listed;
        for (Arch h : hosts) {
          Variant v{h, listed, ""};
          AddArch(&v.arches, h);  // libseccomp always filters the native architecture
          out.push_back(std::move(v));
        }
      }
      if (out.empty()) out.push_back({std::nullopt, listed, ""});
    }
    for (Variant& v : out) {
      v.name =
          out.size() > 1 ? options_.name + "-" + std::string(ArchName(*v.host)) : options_.name;
    }
    return out;
  }

  // Whether any entry depends on the host; `hosts` gets the Ward
  // architectures such conditions name.
  bool ArchConditions(std::vector<Arch>* hosts) const {
    bool any = false;
    for (const DockerSyscall& s : profile_.syscalls) {
      for (const auto* list : {&s.includes.arches, &s.excludes.arches}) {
        any |= !list->empty();
        for (const std::string& n : *list) {
          if (auto a = FromNativeName(n)) AddArch(hosts, *a);
        }
      }
    }
    return any;
  }

  // ---- includes / excludes ------------------------------------------------

  bool KernelAtLeast(const std::array<uint64_t, 2>& v) const {
    if (!options_.kernel) return true;
    const auto& k = *options_.kernel;
    // Docker compares KERNEL.MAJOR only: 3.12.25 and 3.12 are equal.
    return std::tie(k[0], k[1]) >= std::tie(v[0], v[1]);
  }

  bool HasCap(const std::string& cap) const {
    const auto& caps = options_.capabilities;
    return std::find(caps.begin(), caps.end(), cap) != caps.end();
  }

  bool Applies(const DockerSyscall& s, const Variant& v) const {
    const std::string native = v.host ? std::string(NativeName(*v.host)) : "";
    auto has = [](const std::vector<std::string>& list, const std::string& x) {
      return !x.empty() && std::find(list.begin(), list.end(), x) != list.end();
    };
    if (has(s.excludes.arches, native)) return false;
    for (const std::string& c : s.excludes.caps) {
      if (HasCap(c)) return false;
    }
    if (s.excludes.min_kernel && KernelAtLeast(*s.excludes.min_kernel)) return false;
    if (!s.includes.arches.empty() && !has(s.includes.arches, native)) return false;
    for (const std::string& c : s.includes.caps) {
      if (!HasCap(c)) return false;
    }
    if (s.includes.min_kernel && !KernelAtLeast(*s.includes.min_kernel)) return false;
    return true;
  }

  // ---- one variant --------------------------------------------------------

  bool Translate(const Variant& v, WardPolicy* policy) {
    arches_ = v.arches.empty() ? std::vector<Arch>{kDefaultArch} : v.arches;
    std::vector<std::string> order;
    std::map<std::string, std::vector<size_t>> uses;
    for (size_t i = 0; i < profile_.syscalls.size(); ++i) {
      const DockerSyscall& s = profile_.syscalls[i];
      if (!Applies(s, v) || entry_actions_[i].runc == default_.runc) continue;
      std::set<std::string> seen;
      for (const std::string& name : s.names) {
        if (!seen.insert(name).second) continue;
        if (!SyscallExistsAnywhere(name)) {
          Warning(EntryWhere(i), "unknown syscall '" + name + "' is ignored, as runc does");
          continue;
        }
        if (ArchesOf(name).empty()) continue;  // libseccomp adds no rule for it here
        if (!uses.count(name)) order.push_back(name);
        uses[name].push_back(i);
      }
    }
    std::map<std::string, Decision> decisions;
    for (const std::string& name : order) decisions[name] = Decide(name, uses[name]);
    for (const char* name : kBypassProne) {
      if (!ArchesOf(name).empty()) Close(name, &decisions, &order);
    }
    if (!variant_errors_->empty()) return false;
    policy->name = v.name;
    for (Arch a : v.arches) policy->arches.push_back(std::string(ArchName(a)));
    policy->default_action = default_.ward;
    policy->keeps_capabilities = !options_.capabilities.empty();
    policy->capabilities = options_.capabilities;
    Emit(order, decisions, policy);
    return true;
  }

  std::vector<Arch> ArchesOf(const std::string& name) const {
    std::vector<Arch> out;
    for (Arch a : arches_) {
      if (SyscallNumber(a, name)) out.push_back(a);
    }
    return out;
  }

  Decision Decide(const std::string& name, const std::vector<size_t>& entries) {
    Decision d;
    for (size_t i : entries) {
      if (profile_.syscalls[i].args.empty()) {
        d.unconditional = i;
        break;
      }
    }
    if (d.unconditional) {
      // libseccomp: the first unconditional rule decides every call.
      const uint32_t decided = entry_actions_[*d.unconditional].runc;
      for (size_t i : entries) {
        if (i == *d.unconditional || entry_actions_[i].runc == decided) continue;
        Warning(EntryWhere(i), "has no effect on '" + name + "': libseccomp lets the " +
                                   "unconditional rule of " + EntryWhere(*d.unconditional) +
                                   " decide every call");
      }
      return d;
    }
    for (size_t i : entries) {
      std::optional<Conditional> c = Condition(name, i);
      if (!c) continue;
      if (c->alternatives.empty()) {
        Warning(EntryWhere(i), "never applies to '" + name +
                                   "': no value the kernel reads satisfies its conditions");
        continue;
      }
      d.conditional.push_back(std::move(*c));
    }
    CheckOverlaps(name, &d);
    return d;
  }

  // The entry's conditions on `name`, identical on every architecture where
  // the syscall exists; nullopt after an error.
  std::optional<Conditional> Condition(const std::string& name, size_t i) {
    const DockerSyscall& s = profile_.syscalls[i];
    auto signature = SyscallSignature(name);
    if (!signature) {
      Error(EntryWhere(i),
            "cannot import conditions on '" + name + "': Ward does not know its parameters");
      return std::nullopt;
    }
    std::set<uint64_t> indices;
    bool repeated = false;
    for (const DockerArg& a : s.args) repeated |= !indices.insert(a.index).second;
    Conditional c{i, entry_actions_[i], {}, {}};
    std::optional<Arch> first;
    for (Arch arch : ArchesOf(name)) {
      Alternatives alternatives;
      std::vector<Conjunction> unions;
      if (!ArchConditions(name, *signature, s, arch, repeated, &alternatives, &unions)) {
        return std::nullopt;
      }
      if (!first) {
        first = arch;
        c.alternatives = std::move(alternatives);
      } else if (alternatives != c.alternatives) {
        Error(EntryWhere(i), "the conditions on '" + name + "' read differently on " +
                                 std::string(ArchName(*first)) + " and " +
                                 std::string(ArchName(arch)) +
                                 " (a parameter's width differs); one Ward policy applies one "
                                 "condition to every architecture");
        return std::nullopt;
      }
      c.unions[arch] = std::move(unions);
    }
    return c;
  }

  bool ArchConditions(const std::string& name, const std::vector<std::string>& signature,
                      const DockerSyscall& s, Arch arch, bool repeated, Alternatives* alternatives,
                      std::vector<Conjunction>* unions) {
    if (!repeated) {
      *alternatives = {{}};
      unions->push_back({});
    }
    for (const DockerArg& a : s.args) {
      const int index = static_cast<int>(a.index);
      std::optional<ParamType> type = Parameter(name, signature, a, arch);
      if (!type) return false;
      const ArgPredicate p =
          *DockerPredicate(a.op, a.value, a.value_two, ArchBits(arch), type->bits);
      const Alternatives ward = WardConditions(p, index, *type);
      if (repeated) {
        // runc adds each comparison as its own rule: their union.
        alternatives->insert(alternatives->end(), ward.begin(), ward.end());
        unions->push_back({{index, Cubes(p, type->bits)}});
      } else {
        *alternatives = Product(*alternatives, ward);
        (*unions)[0][index] = Cubes(p, type->bits);
      }
    }
    const bool always = std::any_of(alternatives->begin(), alternatives->end(),
                                    [](const auto& a) { return a.empty(); });
    if (always) *alternatives = {{}};
    return true;
  }

  std::optional<ParamType> Parameter(const std::string& name,
                                     const std::vector<std::string>& signature, const DockerArg& a,
                                     Arch arch) {
    if (a.index >= signature.size()) {
      Error(a.where, "'" + name + "' has " + std::to_string(signature.size()) +
                         " parameters; argument " + std::to_string(a.index) + " does not exist");
      return std::nullopt;
    }
    ParamType type = ClassifyParam(signature[a.index], arch);
    const std::string at =
        "argument " + std::to_string(a.index) + " of '" + name + "' (" + type.c_type + ")";
    if (ParamOrderDiffers(name, static_cast<int>(a.index), arch)) {
      Error(a.where, "argument " + std::to_string(a.index) + " of '" + name +
                         "' is another parameter on " + std::string(ArchName(arch)) +
                         " than in Ward's table (x86_64's order), so Ward cannot filter it there");
      return std::nullopt;
    }
    if (type.kind == ParamKind::kPointer) {
      Error(a.where, at + " is a pointer; Ward cannot filter it, as the kernel reads what it "
                          "points to after the filter has run");
      return std::nullopt;
    }
    if (type.kind == ParamKind::kUnknown || type.bits <= 0) {
      Error(a.where, at + " has a type Ward does not know how the kernel reads");
      return std::nullopt;
    }
    if (ArchBits(arch) == 32) {
      for (size_t k = 0; k <= a.index; ++k) {
        ParamType pk = ClassifyParam(signature[k], arch);
        if (pk.kind == ParamKind::kScalar && pk.bits == 64) {
          Error(a.where, at + ": on " + std::string(ArchName(arch)) +
                             " a 64-bit parameter up to this one takes two registers");
          return std::nullopt;
        }
      }
    }
    return type;
  }

  // Overlapping conditional rules with different actions: libseccomp's
  // outcome depends on their order; Ward's is the most restrictive, and two
  // errno values for one call are an error in Ward.
  void CheckOverlaps(const std::string& name, Decision* d) {
    auto& cs = d->conditional;
    for (size_t x = 0; x < cs.size(); ++x) {
      for (size_t y = x + 1; y < cs.size(); ++y) {
        if (cs[x].action.ward == cs[y].action.ward || !Overlap(cs[x], cs[y])) continue;
        const std::string where = EntryWhere(cs[y].entry);
        if (cs[x].action.ward.kind == WardActionKind::kErrno &&
            cs[y].action.ward.kind == WardActionKind::kErrno) {
          Error(where, "overlaps " + EntryWhere(cs[x].entry) + " on '" + name +
                           "' with another errno value: libseccomp picks one by rule order, "
                           "and Ward refuses two errno values for one call");
        } else {
          const WardAction& strict = cs[x].action.ward.Rank() >= cs[y].action.ward.Rank()
                                         ? cs[x].action.ward
                                         : cs[y].action.ward;
          Warning(where, "overlaps " + EntryWhere(cs[x].entry) + " on '" + name +
                             "' with a different action: libseccomp's choice depends on rule "
                             "order; Ward applies the most restrictive (" +
                             ActionText(strict) + ")");
        }
      }
    }
    // Of the rules that hold for every call, the most restrictive covers
    // the others: keep one, so that Ward sees one unconditional rule.
    const Conditional* strict = nullptr;
    for (const Conditional& c : cs) {
      if (c.Always() && (!strict || c.action.ward.Rank() > strict->action.ward.Rank())) strict = &c;
    }
    if (!strict) return;
    const size_t keep = strict->entry;
    cs.erase(std::remove_if(cs.begin(), cs.end(),
                            [&](const Conditional& c) { return c.Always() && c.entry != keep; }),
             cs.end());
  }

  // Keeps a bypass-prone syscall as the profile has it: where no rule
  // names it, Ward gives it the closure's fallback (compiler/syscalls.h),
  // so the default must be written out for it.
  void Close(const std::string& name, std::map<std::string, Decision>* decisions,
             std::vector<std::string>* order) {
    const WardAction fallback = Fallback(name, default_.ward);
    if (fallback == default_.ward) return;
    // Ward closes clone3 only where clone's flags are filtered.
    if (name == "clone3" && !Filtered(decisions, "clone")) return;
    auto it = decisions->find(name);
    if (it == decisions->end()) {
      (*decisions)[name].filler = true;
      order->push_back(name);
      return;
    }
    Decision& d = it->second;
    if (d.unconditional) return;
    if (std::any_of(d.conditional.begin(), d.conditional.end(),
                    [](const Conditional& c) { return c.Always(); })) {
      return;
    }
    for (const Conditional& c : d.conditional) {
      const WardAction& a = c.action.ward;
      if (a.Rank() <= default_.ward.Rank() ||
          (a.kind == WardActionKind::kErrno && default_.ward.kind == WardActionKind::kErrno)) {
        Error(EntryWhere(c.entry), "cannot import '" + name +
                                       "' exactly: Ward closes it unless a rule names it, and " +
                                       "the default (" + ActionText(default_.ward) +
                                       ") cannot be written beside this rule's " + ActionText(a));
        return;
      }
    }
    d.filler = true;
  }

  // Whether the syscall's decision depends on its arguments.
  static bool Filtered(const std::map<std::string, Decision>* decisions, const std::string& name) {
    auto it = decisions->find(name);
    if (it == decisions->end() || it->second.unconditional) return false;
    const auto& cs = it->second.conditional;
    return !cs.empty() &&
           std::none_of(cs.begin(), cs.end(), [](const Conditional& c) { return c.Always(); });
  }

  // ---- the Ward text ------------------------------------------------------

  void Emit(const std::vector<std::string>& order, const std::map<std::string, Decision>& decisions,
            WardPolicy* policy) const {
    // Unconditional decisions, one rule per action in order of appearance.
    std::vector<WardRule> plain;
    auto add_plain = [&](const WardAction& a, const std::string& name) {
      for (WardRule& r : plain) {
        if (r.action == a && r.comments.empty()) {
          r.names.push_back(name);
          return;
        }
      }
      plain.push_back({a, {name}, {}, {}, {}});
    };
    WardRule fillers{default_.ward, {}, {}, {}, {}};
    for (const std::string& name : order) {
      const Decision& d = decisions.at(name);
      if (d.unconditional) add_plain(entry_actions_[*d.unconditional].ward, name);
      if (d.filler) fillers.names.push_back(name);
    }
    policy->rules = std::move(plain);
    // Conditional rules, entry by entry, one per set of conditions.
    for (size_t i = 0; i < profile_.syscalls.size(); ++i) {
      std::vector<WardRule> rules;
      for (const std::string& name : order) {
        for (const Conditional& c : decisions.at(name).conditional) {
          if (c.entry != i) continue;
          for (const std::vector<std::string>& alt : c.alternatives) {
            auto same = [&](const WardRule& r) { return r.conditions == alt; };
            auto r = std::find_if(rules.begin(), rules.end(), same);
            if (r == rules.end()) {
              rules.push_back({c.action.ward, {name}, alt, {}, EntryWhere(i)});
            } else {
              r->names.push_back(name);
            }
          }
        }
      }
      if (rules.empty()) continue;
      const std::string& comment = profile_.syscalls[i].comment;
      rules.front().comments.push_back(EntryWhere(i) + (comment.empty() ? "" : ": " + comment));
      policy->rules.insert(policy->rules.end(), rules.begin(), rules.end());
    }
    if (!fillers.names.empty()) {
      fillers.comments = {"Ward closes io_uring, clone3, socketcall and ipc unless a rule names",
                          "them; named here so that they keep the profile's default"};
      policy->rules.push_back(std::move(fillers));
    }
  }

  std::vector<std::string> Header(size_t variants) const {
    std::vector<std::string> h = {
        "Imported from " + options_.source + " by `ward import --from " + options_.from + "`.",
        "Docker decides `includes` and `excludes` when it loads a profile; here they were",
        "decided for"};
    std::string caps;
    for (const std::string& c : options_.capabilities) caps += (caps.empty() ? "" : ", ") + c;
    h.push_back("  capabilities: " + (caps.empty() ? "none (the policy keeps none)"
                                                   : caps + " (the policy keeps them)"));
    if (options_.kernel) {
      const auto& k = *options_.kernel;
      h.push_back("  kernel: " + std::to_string(k[0]) + "." + std::to_string(k[1]) + "." +
                  std::to_string(k[2]));
    } else {
      h.push_back("  kernel: new enough for every minKernel");
    }
    if (variants > 1) {
      h.push_back("One policy per host architecture: Docker picks the rules for the host it");
      h.push_back("runs on.");
    }
    for (const ImportDiagnostic& d : *diagnostics_) {
      if (d.severity != Severity::kWarning) continue;
      h.push_back("warning: " + (d.where.empty() ? "" : d.where + ": ") + d.message);
    }
    return h;
  }

  const DockerProfile& profile_;
  const DockerImportOptions& options_;
  std::vector<ImportDiagnostic>* diagnostics_;
  int errors_ = 0;
  bool disabled_ = false;
  Action default_;
  std::vector<Action> entry_actions_;                        // per entry
  std::vector<ImportDiagnostic>* variant_errors_ = nullptr;  // see Error()
  std::vector<Arch> arches_;  // of the variant being translated; never empty
};

}  // namespace

std::optional<std::array<uint64_t, 3>> ParseKernelVersion(std::string_view text) {
  std::array<uint64_t, 3> v{0, 0, 0};
  size_t pos = 0;
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (pos >= text.size() || text[pos] != '.') {
        if (part == 1) return std::nullopt;
        break;
      }
      ++pos;
    }
    const size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) &&
           pos - start < 9) {
      v[part] = v[part] * 10 + static_cast<uint64_t>(text[pos] - '0');
      ++pos;
    }
    if (pos == start) {
      if (part < 2) return std::nullopt;
      break;
    }
  }
  return v;
}

std::string PolicyNameFromPath(std::string_view path) {
  std::string_view base = path.substr(path.find_last_of('/') + 1);
  if (size_t dot = base.find('.'); dot != std::string_view::npos && dot > 0) {
    base = base.substr(0, dot);
  }
  std::string name;
  for (char c : base) {
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '-';
  }
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) name = "p-" + name;
  return name;
}

ImportResult ImportDockerSeccomp(std::string_view json, const DockerImportOptions& options) {
  ImportResult result;
  DockerProfile profile;
  if (!ParseDockerProfile(json, &profile, &result.diagnostics)) return result;
  result.ok = Importer(profile, options, &result.diagnostics).Run(&result.text, &result.origins);
  return result;
}

}  // namespace ward::importers
