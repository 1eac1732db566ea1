#include "enforcers/linux/dns.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace ward::enforce {
namespace {

// A resolver state of our own (res_ninit), closed on every path.
class Resolver {
 public:
  Resolver() { std::memset(&state_, 0, sizeof state_); }
  ~Resolver() {
    if (open_) res_nclose(&state_);
  }
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  bool Open(const DnsOptions& options, std::string* error) {
    if (res_ninit(&state_) != 0) {
      *error = "cannot initialise the resolver (res_ninit)";
      return false;
    }
    open_ = true;
    // The name is asked as written: never with the search list's suffixes,
    // which could make "example.com" mean "example.com.corp.internal".
    state_.options &= ~static_cast<unsigned long>(RES_DEFNAMES | RES_DNSRCH);
    state_.retrans = options.timeout_seconds;
    state_.retry = options.attempts;
    if (!options.servers.empty()) {
      if (options.servers.size() > MAXNS) {
        *error = "at most " + std::to_string(MAXNS) + " DNS servers";
        return false;
      }
      state_.nscount = 0;
      for (const std::string& s : options.servers) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(options.port);
        if (inet_pton(AF_INET, s.c_str(), &a.sin_addr) != 1) {
          *error = "DNS server \"" + s + "\" is not an IPv4 address";
          return false;
        }
        state_.nsaddr_list[state_.nscount++] = a;
      }
    }
    return true;
  }

  res_state get() { return &state_; }

 private:
  struct __res_state state_;
  bool open_ = false;
};

bool SameName(const std::string& a, const std::string& b) {
  auto strip = [](const std::string& s) {
    return !s.empty() && s.back() == '.' ? s.substr(0, s.size() - 1) : s;
  };
  const std::string x = strip(a), y = strip(b);
  return x.size() == y.size() && strcasecmp(x.c_str(), y.c_str()) == 0;
}

// One query: the answers of `type` on the CNAME chain from `name`.
// Returns false only when no usable reply came.
bool Query(Resolver& r, const std::string& name, int type, const DnsOptions& options,
           std::map<IpPrefix, uint32_t, bool (*)(const IpPrefix&, const IpPrefix&)>* out,
           std::string* error) {
  unsigned char reply[NS_MAXMSG];
  const int len = res_nquery(r.get(), name.c_str(), ns_c_in, type, reply, sizeof reply);
  if (len < 0) {
    switch (r.get()->res_h_errno) {
      case HOST_NOT_FOUND:  // NXDOMAIN
      case NO_DATA:         // the name has no record of this type
        return true;
      default:
        *error = "no answer for " + name + " (" + (type == ns_t_a ? "A" : "AAAA") +
                 "): " + hstrerror(r.get()->res_h_errno);
        return false;
    }
  }
  ns_msg msg;
  if (ns_initparse(reply, len, &msg) != 0) {
    *error = "malformed DNS reply for " + name;
    return false;
  }
  // The records on the chain: the name asked, then each CNAME target reached
  // from it, in answer order (servers put the chain first). A record for any
  // other owner is ignored: it was not asked for.
  std::vector<std::string> chain = {name};
  uint32_t chain_ttl = UINT32_MAX;
  const int count = ns_msg_count(msg, ns_s_an);
  for (int pass = 0; pass < 2; ++pass) {
    // Two passes: a CNAME listed after the record it leads to still counts.
    for (int i = 0; i < count; ++i) {
      ns_rr rr;
      if (ns_parserr(&msg, ns_s_an, i, &rr) != 0) {
        *error = "malformed DNS reply for " + name;
        return false;
      }
      if (ns_rr_class(rr) != ns_c_in) continue;
      const std::string owner = ns_rr_name(rr);
      const bool on_chain = std::any_of(chain.begin(), chain.end(),
                                        [&](const std::string& c) { return SameName(c, owner); });
      if (!on_chain) continue;
      if (ns_rr_type(rr) == ns_t_cname && pass == 0) {
        char target[NS_MAXDNAME];
        if (ns_name_uncompress(ns_msg_base(msg), ns_msg_end(msg), ns_rr_rdata(rr), target,
                               sizeof target) < 0) {
          *error = "malformed CNAME in the DNS reply for " + name;
          return false;
        }
        chain.push_back(target);
        chain_ttl = std::min(chain_ttl, ns_rr_ttl(rr));
      }
    }
  }
  for (int i = 0; i < count; ++i) {
    ns_rr rr;
    if (ns_parserr(&msg, ns_s_an, i, &rr) != 0) continue;
    if (ns_rr_class(rr) != ns_c_in || ns_rr_type(rr) != type) continue;
    const std::string owner = ns_rr_name(rr);
    if (std::none_of(chain.begin(), chain.end(),
                     [&](const std::string& c) { return SameName(c, owner); })) {
      continue;
    }
    IpPrefix p;
    p.v6 = type == ns_t_aaaa;
    const size_t size = p.v6 ? 16 : 4;
    if (ns_rr_rdlen(rr) != size) {
      *error = "malformed address record in the DNS reply for " + name;
      return false;
    }
    std::memcpy(p.bytes.data(), ns_rr_rdata(rr), size);
    p.length = p.v6 ? 128 : 32;
    uint32_t ttl = std::min(chain_ttl, ns_rr_ttl(rr));
    ttl = std::clamp(ttl, options.ttl_floor, std::max(options.ttl_floor, options.ttl_cap));
    auto [it, fresh] = out->emplace(p, ttl);
    if (!fresh) it->second = std::min(it->second, ttl);
  }
  return true;
}

bool PrefixLess(const IpPrefix& a, const IpPrefix& b) {
  if (a.v6 != b.v6) return !a.v6;
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  return a.length < b.length;
}

}  // namespace

bool ResolveName(const std::string& name, const DnsOptions& options,
                 std::vector<DnsAnswer>* answers, std::string* error) {
  answers->clear();
  if (name.empty() || name.front() == '*' || name.size() > NS_MAXDNAME) {
    *error = "cannot resolve \"" + name + "\"";
    return false;
  }
  Resolver r;
  if (!r.Open(options, error)) return false;
  error->clear();
  // Each family on its own: a server that answers A but refuses AAAA (as
  // dnsmasq does for a name it holds only an IPv4 address for) still gives
  // the addresses it did answer. Fewer addresses only narrow a grant.
  using Found = std::map<IpPrefix, uint32_t, bool (*)(const IpPrefix&, const IpPrefix&)>;
  Found found(PrefixLess);
  std::string failed;
  int failures = 0;
  for (const int type : {ns_t_a, ns_t_aaaa}) {
    Found one(PrefixLess);
    std::string why;
    if (!Query(r, name, type, options, &one, &why)) {
      failed += (failed.empty() ? "" : "; ") + why;
      ++failures;
      continue;
    }
    for (const auto& [address, ttl] : one) {
      auto [it, fresh] = found.emplace(address, ttl);
      if (!fresh) it->second = std::min(it->second, ttl);
    }
  }
  *error = failed;
  // Nothing usable: both failed, or one failed and the other has no records.
  if (failures == 2 || (failures == 1 && found.empty())) return false;
  for (const auto& [address, ttl] : found) answers->push_back({address, ttl});
  return true;
}

}  // namespace ward::enforce
