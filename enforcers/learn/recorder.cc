#include "enforcers/learn/recorder.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "enforcers/learn/bpf/learn_event.h"
#include "learn.skel.h"

namespace ward::learn {

struct Recorder::State {
  learn_bpf* skel = nullptr;
  ring_buffer* rb = nullptr;
  bpf_link* dns_link = nullptr;
  int cgroup_fd = -1;
  std::thread reader;
  std::atomic<bool> stop{false};
  Records records;
};

namespace {

constexpr uint32_t kFmodeCreated = 1u << 20;  // FMODE_CREATED: the open created the file

// enum learn_call's syscalls, in its order.
constexpr const char* kCalls[CALL_COUNT] = {
    "open",    "openat",  "openat2",   "creat",     "mkdir",   "mkdirat", "mknod",
    "mknodat", "symlink", "symlinkat", "link",      "linkat",  "unlink",  "unlinkat",
    "rmdir",   "rename",  "renameat",  "renameat2", "connect", "bind",    "socket"};

std::string Address(int family, const unsigned char* addr) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(family, addr, text, sizeof text);
  return text;
}

// A walk's components (leaf first, NUL-terminated: learn_event.h) as an
// absolute path; "" when the walk did not reach the root.
std::string Decode(const char* buf, unsigned n, bool truncated) {
  if (truncated) return "";
  std::vector<std::string> parts;
  size_t off = 0;
  for (unsigned i = 0; i < n && off < LEARN_BUF; ++i) {
    const size_t len = strnlen(buf + off, LEARN_BUF - off);
    parts.emplace_back(buf + off, len);
    off += len + 1;
  }
  std::string path;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) path += "/" + *it;
  return path.empty() ? "/" : path;
}

// Lexically normalised: `.` and empty components dropped, `..` taken back
// (the kernel resolved the name already; this only spells it).
std::string Lexical(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    const std::string part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

// A syscall's name argument, absolute or against the directory walked.
std::string Resolve(const char* str, const char* dir_buf, unsigned n, bool truncated) {
  const std::string name(str, strnlen(str, LEARN_STR));
  if (name.empty()) return "";
  if (name[0] == '/') return Lexical(name);
  const std::string dir = Decode(dir_buf, n, truncated);
  return dir.empty() ? "" : Lexical(dir + "/" + name);
}

int OnEvent(void* ctx, void* data, size_t size) {
  if (size < sizeof(learn_event)) return 0;
  auto* records = static_cast<Records*>(ctx);
  const auto* ev = static_cast<const learn_event*>(data);
  ++records->events;
  std::string path;
  if (ev->kind == LEARN_OPEN || ev->kind == LEARN_EXEC) {
    path = Decode(ev->u.p.path, ev->ncomp, ev->truncated & 1);
  } else if (ev->kind <= LEARN_RENAME) {
    path = Resolve(ev->u.p.str, ev->u.p.path, ev->ncomp, ev->truncated & 1);
  }
  if (ev->kind <= LEARN_RENAME && path.empty()) ++records->truncated;
  switch (ev->kind) {
    case LEARN_OPEN:
      if (path.empty()) break;
      // FMODE_READ 1, FMODE_WRITE 2.
      if ((ev->mode & 0170000) == 0040000) {
        records->read_dirs.insert(path);
      } else {
        if (ev->flags & 1) records->read.insert(path);
        if (ev->flags & 2) records->write.insert(path);
      }
      if (ev->flags & kFmodeCreated) records->created.insert(path);
      break;
    case LEARN_EXEC: {
      if (!path.empty()) records->exec.insert(path);
      // A script: the name executed, besides its interpreter.
      const std::string given = Resolve(ev->u.p.str, ev->u.p.path2, ev->ncomp2, ev->truncated & 2);
      if (!given.empty() && given.rfind("/dev/fd/", 0) != 0) {
        records->exec.insert(given);
      }
      break;
    }
    case LEARN_CREATE:
      if (!path.empty()) records->created.insert(path);
      break;
    case LEARN_DELETE:
      if (!path.empty()) records->deleted.insert(path);
      break;
    case LEARN_RENAME: {
      if (!path.empty()) records->renamed.insert(path);
      const std::string to = Resolve(ev->u.p.str2, ev->u.p.path2, ev->ncomp2, ev->truncated & 2);
      if (!to.empty()) records->renamed.insert(to);
      break;
    }
    case LEARN_CONNECT:
    case LEARN_BIND: {
      auto& set = ev->kind == LEARN_CONNECT ? records->connects : records->binds;
      if (ev->family == AF_INET || ev->family == AF_INET6) {
        Records::Peer peer;
        peer.family = static_cast<int>(ev->family);
        peer.type = static_cast<int>(ev->flags & 0xf);
        peer.address = Address(peer.family, ev->addr);
        peer.port = static_cast<uint16_t>(ev->port);
        set.insert(peer);
      } else if (ev->family == AF_UNIX && ev->kind == LEARN_CONNECT && ev->len > 1) {
        const size_t n = std::min<size_t>(ev->len, 108);
        if (ev->u.p.path[0] == 0) {
          records->unix_connects.insert("@" + std::string(ev->u.p.path + 1, n - 1));
        } else {
          records->unix_connects.insert(std::string(ev->u.p.path, strnlen(ev->u.p.path, n)));
        }
      }
      break;
    }
    case LEARN_SOCKET:
      records->sockets.insert({static_cast<int>(ev->family), static_cast<int>(ev->flags & 0xf),
                               static_cast<int>(ev->mode)});
      break;
    case LEARN_SYSCALL:
      records->syscalls.insert({ev->nr, ev->arg});
      break;
    case LEARN_DNS_REPLY:
      ++records->dns_replies;
      AddDnsAnswers(ev->u.dns, std::min<size_t>(ev->len, LEARN_DNS), records);
      break;
    default:
      break;
  }
  return 0;
}

std::string LibbpfError(const char* step, int err) {
  return std::string("recorder: ") + step + ": " + strerror(err < 0 ? -err : err);
}

}  // namespace

Recorder::Recorder() = default;

Recorder::~Recorder() {
  if (state_) Stop();
}

bool Recorder::Start(const RecorderOptions& options, std::string* error) {
  state_ = std::make_unique<State>();
  State& s = *state_;
  s.skel = learn_bpf__open();
  if (!s.skel) {
    *error = LibbpfError("open", errno);
    state_.reset();
    return false;
  }
  s.skel->rodata->target_cgid = options.cgroup_id;
  s.skel->rodata->target_level = static_cast<uint32_t>(options.cgroup_level);
  const char* kept[] = {"clone", "socket", "personality"};
  for (size_t i = 0; i < 3; ++i) {
    const int nr = seccomp_syscall_resolve_name(kept[i]);
    s.skel->rodata->arg0_nr[i] = nr >= 0 ? nr : -1;
  }
  for (int i = 0; i < CALL_COUNT; ++i) {
    const int nr = seccomp_syscall_resolve_name(kCalls[i]);
    s.skel->rodata->call_nr[i] = nr >= 0 ? nr : -1;
  }
  bpf_map__set_max_entries(s.skel->maps.learn_rb, options.ring_bytes);
  int err = learn_bpf__load(s.skel);
  if (err) {
    *error = LibbpfError("load", err);
    Stop();
    return false;
  }
  err = learn_bpf__attach(s.skel);  // every program but the cgroup one (kprobes, tracepoint)
  if (err) {
    *error = LibbpfError("attach", err);
    Stop();
    return false;
  }
  s.cgroup_fd = open(options.cgroup_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (s.cgroup_fd < 0) {
    *error = LibbpfError(("open " + options.cgroup_path).c_str(), errno);
    Stop();
    return false;
  }
  s.dns_link = bpf_program__attach_cgroup(s.skel->progs.learn_dns, s.cgroup_fd);
  if (!s.dns_link) {
    *error = LibbpfError("attach the DNS program", errno);
    Stop();
    return false;
  }
  s.rb = ring_buffer__new(bpf_map__fd(s.skel->maps.learn_rb), OnEvent, &s.records, nullptr);
  if (!s.rb) {
    *error = LibbpfError("ring buffer", errno);
    Stop();
    return false;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  s.reader = std::thread([&s] {
    while (!s.stop.load()) ring_buffer__poll(s.rb, 50);
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return true;
}

Records Recorder::Stop() {
  if (!state_) return {};
  State& s = *state_;
  s.stop = true;
  if (s.reader.joinable()) s.reader.join();
  if (s.rb) {
    ring_buffer__consume(s.rb);
    ring_buffer__free(s.rb);
  }
  if (s.skel && s.skel->bss) s.records.drops = s.skel->bss->drops;
  if (s.dns_link) bpf_link__destroy(s.dns_link);
  if (s.cgroup_fd >= 0) close(s.cgroup_fd);
  if (s.skel) learn_bpf__destroy(s.skel);
  Records out = std::move(s.records);
  state_.reset();
  return out;
}

bool AddDnsAnswers(const uint8_t* data, size_t len, Records* records) {
  ldns_pkt* pkt = nullptr;
  if (ldns_wire2pkt(&pkt, data, len) != LDNS_STATUS_OK || !pkt) return false;
  if (!ldns_pkt_qr(pkt)) {
    ldns_pkt_free(pkt);
    return false;
  }
  // The question's name: what the workload asked for, which a CNAME chain
  // leads from.
  std::string asked;
  if (ldns_rr_list* q = ldns_pkt_question(pkt); q && ldns_rr_list_rr_count(q) > 0) {
    if (char* n = ldns_rdf2str(ldns_rr_owner(ldns_rr_list_rr(q, 0)))) {
      asked = n;
      free(n);
    }
  }
  auto clean = [](std::string name) {
    if (!name.empty() && name.back() == '.') name.pop_back();
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return name;
  };
  ldns_rr_list* answers = ldns_pkt_answer(pkt);
  for (size_t i = 0; answers && i < ldns_rr_list_rr_count(answers); ++i) {
    ldns_rr* rr = ldns_rr_list_rr(answers, i);
    const ldns_rr_type type = ldns_rr_get_type(rr);
    if (type != LDNS_RR_TYPE_A && type != LDNS_RR_TYPE_AAAA) continue;
    ldns_rdf* rdf = ldns_rr_rdf(rr, 0);
    char* addr = rdf ? ldns_rdf2str(rdf) : nullptr;
    char* owner = ldns_rdf2str(ldns_rr_owner(rr));
    if (addr && owner) {
      auto& names = records->dns_names[addr];
      names.insert(clean(asked.empty() ? owner : asked));
    }
    free(addr);
    free(owner);
  }
  ldns_pkt_free(pkt);
  return true;
}

}  // namespace ward::learn
