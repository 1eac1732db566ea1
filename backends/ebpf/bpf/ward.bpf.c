// SPDX-License-Identifier: GPL-2.0
/* Ward's network enforcement for one cgroup v2 tree (backends/ebpf/README.md).
 * Every egress hook decides by the same lookup: the active generation from
 * `config`, the address in the domain map while its answer has not expired,
 * else in the exact HASH map, else in the LPM trie of the
 * partition's prefixes, then the port set of the protocol. Ingress looks the
 * source address up the same way in the ingress maps, with the local port.
 * The unix hooks look the socket's name up in `unix_names`. A miss refuses. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "ward_ebpf.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define IPPROTO_ICMP 1
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define IPPROTO_ICMPV6 58
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define TCP_LISTEN 10
#define BPF_TCP_ESTABLISHED_STATE 1 /* a connected UDP socket's state */

/* Mmapable: user space flips `state` with one atomic 8-byte store. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ward_config);
} ward_cfg SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v4_key);
  __type(value, struct ward_entry);
} v4_exact SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v6_key);
  __type(value, struct ward_entry);
} v6_exact SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v4_key);
  __type(value, struct ward_timed_entry);
} v4_dom SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v6_key);
  __type(value, struct ward_timed_entry);
} v6_dom SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v4_lpm_key);
  __type(value, struct ward_entry);
} v4_lpm SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v6_lpm_key);
  __type(value, struct ward_entry);
} v6_lpm SEC(".maps");

/* The ingress partition: keyed by the remote (source) address; the port
 * sets are over the local port. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v4_key);
  __type(value, struct ward_entry);
} in4_exact SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v6_key);
  __type(value, struct ward_entry);
} in6_exact SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v4_lpm_key);
  __type(value, struct ward_entry);
} in4_lpm SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_ENTRIES);
  __type(key, struct ward_v6_lpm_key);
  __type(value, struct ward_entry);
} in6_lpm SEC(".maps");

/* By generation: the local ports some ingress rule allows from some address
 * (what an explicit bind() may take). */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, WARD_GENERATIONS);
  __type(key, __u32);
  __type(value, struct ward_entry);
} in_bind SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, WARD_GENERATIONS* WARD_MAX_PORTSETS);
  __type(key, __u32);
  __type(value, struct ward_portset);
} portsets SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_RULE_TEXTS);
  __type(key, struct ward_rule_key);
  __type(value, struct ward_rule_text);
} rules SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* TCP sockets that connect4/6 saw: the flow cutter ends only these (an
 * accepted connection is ingress, which this program set does not decide). */
struct {
  __uint(type, BPF_MAP_TYPE_SK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, __u32);
} egress_socks SEC(".maps");

/* Sockets explicitly bound to a port (bind4/6): the UDP datagrams they
 * receive are decided by the ingress partition. */
struct {
  __uint(type, BPF_MAP_TYPE_SK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, __u32);
} ingress_socks SEC(".maps");

/* Unix socket names: granted, or refused by a deny rule (for events). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, WARD_MAX_UNIX_NAMES);
  __type(key, struct ward_unix_key);
  __type(value, __u32);
} unix_names SEC(".maps");

extern int bpf_sock_destroy(struct sock_common* sk) __ksym;
extern void* bpf_cast_to_kern_ctx(void* obj) __ksym;

struct verdict {
  __u32 allow;
  __u32 rule;
};

/* The state word (generation and flags), read with ONE 8-byte load: the
 * writer changes it with one atomic store, so a run sees the old word or
 * the new one, never a mix. 0 (generation 0, no flags) without the map. */
static __always_inline __u64 ward_state(void) {
  __u32 zero = 0;
  struct ward_config* c = bpf_map_lookup_elem(&ward_cfg, &zero);
  if (!c) return 0;
  return *(volatile __u64*)&c->state;
}

/* The active generation in bit 0; bit 1 set when the domain maps are in use
 * (decide4/6 look there only then). */
#define WARD_GEN_DOMAINS 2u
static __always_inline __u32 flags_gen_of(__u64 state) {
  return (__u32)(state & WARD_STATE_GENERATION) |
         (((state >> WARD_STATE_FLAGS_SHIFT) & WARD_CFG_DOMAINS) ? WARD_GEN_DOMAINS : 0);
}
static __always_inline __u32 generation(void) { return flags_gen_of(ward_state()); }

/* The verdict of the segment holding `port` in a port set, found by binary
 * search: WARD_ALLOW, or the refusing rule's id (0: no rule matched). A
 * global function: the verifier checks it once per program, not once per
 * path that reaches it (which made it most of the programs' verification
 * cost). */
__noinline __u32 ward_port_verdict(__u32 gen, __u32 set, __u32 port) {
  __u32 idx = (gen & 1) * WARD_MAX_PORTSETS + (set & (WARD_MAX_PORTSETS - 1));
  struct ward_portset* ps = bpf_map_lookup_elem(&portsets, &idx);
  if (!ps) return 0;
  __u32 lo = 0, hi = ps->count;
  if (hi > WARD_MAX_SEGMENTS) hi = WARD_MAX_SEGMENTS;
#pragma unroll
  for (int i = 0; i < 7; i++) { /* 2^7 > WARD_MAX_SEGMENTS */
    if (lo < hi) {
      __u32 mid = ((lo + hi) / 2) & (WARD_MAX_SEGMENTS - 1);
      asm volatile("" : "+r"(mid));
      if (ps->seg[mid & (WARD_MAX_SEGMENTS - 1)].hi < port)
        lo = mid + 1;
      else
        hi = mid;
    }
  }
  if (lo < ps->count && lo < WARD_MAX_SEGMENTS) {
    __u32 i = lo & (WARD_MAX_SEGMENTS - 1);
    asm volatile("" : "+r"(i)); /* keep the mask where the verifier sees it */
    struct ward_segment* s = &ps->seg[i & (WARD_MAX_SEGMENTS - 1)];
    if (s->lo <= port && port <= s->hi) return s->verdict;
  }
  return 0;
}

static __always_inline struct verdict port_verdict(__u32 gen, __u16 set, __u16 port) {
  __u32 r = ward_port_verdict(gen, set, port);
  struct verdict v = {r == WARD_ALLOW, r & ~WARD_ALLOW};
  return v;
}

static __always_inline struct verdict entry_verdict(__u32 gen, struct ward_entry* e, __u8 proto,
                                                    __u16 port) {
  struct verdict v = {0, 0};
  if (!e) return v;
  switch (proto) {
    case IPPROTO_TCP:
      return port_verdict(gen, e->tcp_set, port);
    case IPPROTO_UDP:
      return port_verdict(gen, e->udp_set, port);
    case IPPROTO_ICMP:
      v.allow = e->icmp == WARD_ALLOW;
      v.rule = e->icmp & ~WARD_ALLOW;
      return v;
  }
  return v;
}

static __always_inline struct verdict decide4(__u32 flags_gen, __u32 addr, __u8 proto,
                                              __u16 port) {
  __u32 gen = flags_gen & 1;
  struct ward_v4_key k = {.generation = gen};
  __builtin_memcpy(k.addr, &addr, 4);
  struct ward_entry* e = 0;
  if (flags_gen & WARD_GEN_DOMAINS) {
    struct ward_timed_entry* t = bpf_map_lookup_elem(&v4_dom, &k);
    if (t && t->expires_ns > bpf_ktime_get_boot_ns()) e = &t->entry;
  }
  if (!e) e = bpf_map_lookup_elem(&v4_exact, &k);
  if (!e) {
    struct ward_v4_lpm_key lk = {.prefixlen = 64, .generation = gen};
    __builtin_memcpy(lk.addr, &addr, 4);
    e = bpf_map_lookup_elem(&v4_lpm, &lk);
  }
  return entry_verdict(gen, e, proto, port);
}

static __always_inline int is_mapped(const __u32* a) {
  return a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff);
}

static __always_inline struct verdict decide6(__u32 flags_gen, const __u32* a, __u8 proto,
                                              __u16 port) {
  if (is_mapped(a)) return decide4(flags_gen, a[3], proto, port);
  __u32 gen = flags_gen & 1;
  struct ward_v6_key k = {.generation = gen};
  __builtin_memcpy(k.addr, a, 16);
  struct ward_entry* e = 0;
  if (flags_gen & WARD_GEN_DOMAINS) {
    struct ward_timed_entry* t = bpf_map_lookup_elem(&v6_dom, &k);
    if (t && t->expires_ns > bpf_ktime_get_boot_ns()) e = &t->entry;
  }
  if (!e) e = bpf_map_lookup_elem(&v6_exact, &k);
  if (!e) {
    struct ward_v6_lpm_key lk = {.prefixlen = 160, .generation = gen};
    __builtin_memcpy(lk.addr, a, 16);
    e = bpf_map_lookup_elem(&v6_lpm, &lk);
  }
  return entry_verdict(gen, e, proto, port);
}

/* Ingress: the source address in the ingress maps (no domain maps), the
 * local port in the protocol's port set. `gen`: the bare generation. */
static __always_inline struct verdict ingress4(__u32 gen, __u32 addr, __u8 proto, __u16 port) {
  struct ward_v4_key k = {.generation = gen};
  __builtin_memcpy(k.addr, &addr, 4);
  struct ward_entry* e = bpf_map_lookup_elem(&in4_exact, &k);
  if (!e) {
    struct ward_v4_lpm_key lk = {.prefixlen = 64, .generation = gen};
    __builtin_memcpy(lk.addr, &addr, 4);
    e = bpf_map_lookup_elem(&in4_lpm, &lk);
  }
  return entry_verdict(gen, e, proto, port);
}

static __always_inline struct verdict ingress6(__u32 gen, const __u32* a, __u8 proto, __u16 port) {
  if (is_mapped(a)) return ingress4(gen, a[3], proto, port);
  struct ward_v6_key k = {.generation = gen};
  __builtin_memcpy(k.addr, a, 16);
  struct ward_entry* e = bpf_map_lookup_elem(&in6_exact, &k);
  if (!e) {
    struct ward_v6_lpm_key lk = {.prefixlen = 160, .generation = gen};
    __builtin_memcpy(lk.addr, a, 16);
    e = bpf_map_lookup_elem(&in6_lpm, &lk);
  }
  return entry_verdict(gen, e, proto, port);
}

static __always_inline void report_local(__u32 gen, __u8 hook, __u8 family, __u8 proto, __u16 port,
                                         __u16 local_port, const __u32* addr, __u32 rule) {
  struct ward_event* ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
  if (!ev) return;
  __builtin_memset(ev, 0, sizeof(*ev));
  ev->generation = gen & 1;
  ev->pid = bpf_get_current_pid_tgid() >> 32;
  ev->rule = rule;
  ev->hook = hook;
  ev->family = family;
  ev->proto = proto;
  ev->port = port;
  ev->local_port = local_port;
  if (family == 4) {
    __builtin_memcpy(ev->addr, addr, 4);
  } else if (family == 6) {
    __builtin_memcpy(ev->addr, addr, 16);
  }
  bpf_ringbuf_submit(ev, 0);
}

static __always_inline void report(__u32 gen, __u8 hook, __u8 family, __u8 proto, __u16 port,
                                   const __u32* addr, __u32 rule) {
  report_local(gen, hook, family, proto, port, 0, addr, rule);
}

/* The protocol a sock_addr call speaks: ping sockets are ICMP. */
static __always_inline __u8 sock_proto(struct bpf_sock_addr* ctx) {
  if (ctx->protocol == IPPROTO_ICMP || ctx->protocol == IPPROTO_ICMPV6) return IPPROTO_ICMP;
  if (ctx->type == SOCK_STREAM) return IPPROTO_TCP;
  return IPPROTO_UDP;
}

/* A connect or send to 0.0.0.0 reaches this host's loopback address (the
 * route lookup's "no destination"), and one to :: or ::ffff:0.0.0.0 the
 * loopback too (tcp_v6_connect's and udpv6_sendmsg's BSD rule): decided as
 * what it reaches, so that `deny to loopback` holds for them and `allow to
 * loopback` covers them. */
static __always_inline int addr4(struct bpf_sock_addr* ctx, __u8 hook) {
  __u32 gen = generation();
  __u8 proto = sock_proto(ctx);
  __u16 port = bpf_ntohs((__u16)ctx->user_port);
  __u32 addr = ctx->user_ip4;
  if (addr == 0) addr = bpf_htonl(0x7f000001);
  struct verdict v = decide4(gen, addr, proto, port);
  if (v.allow) return 1;
  report(gen, hook, 4, proto, port, &addr, v.rule);
  return 0;
}

static __always_inline int addr6(struct bpf_sock_addr* ctx, __u8 hook) {
  __u32 gen = generation();
  __u8 proto = sock_proto(ctx);
  __u16 port = bpf_ntohs((__u16)ctx->user_port);
  __u32 a[4];
  a[0] = ctx->user_ip6[0];
  a[1] = ctx->user_ip6[1];
  a[2] = ctx->user_ip6[2];
  a[3] = ctx->user_ip6[3];
  if (a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0)
    a[3] = bpf_htonl(1);
  else if (is_mapped(a) && a[3] == 0)
    a[3] = bpf_htonl(0x7f000001);
  struct verdict v = decide6(gen, a, proto, port);
  if (v.allow) return 1;
  if (is_mapped(a))
    report(gen, hook, 4, proto, port, &a[3], v.rule);
  else
    report(gen, hook, 6, proto, port, a, v.rule);
  return 0;
}

static __always_inline void mark_egress(struct bpf_sock_addr* ctx) {
  if (ctx->type != SOCK_STREAM || !ctx->sk) return;
  bpf_sk_storage_get(&egress_socks, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
}

SEC("cgroup/connect4")
int ward_connect4(struct bpf_sock_addr* ctx) {
  mark_egress(ctx);
  return addr4(ctx, WARD_HOOK_CONNECT);
}

SEC("cgroup/connect6")
int ward_connect6(struct bpf_sock_addr* ctx) {
  mark_egress(ctx);
  return addr6(ctx, WARD_HOOK_CONNECT);
}

SEC("cgroup/sendmsg4")
int ward_sendmsg4(struct bpf_sock_addr* ctx) { return addr4(ctx, WARD_HOOK_SENDMSG); }

SEC("cgroup/sendmsg6")
int ward_sendmsg6(struct bpf_sock_addr* ctx) { return addr6(ctx, WARD_HOOK_SENDMSG); }

/* An explicit bind() to a port: refused (EPERM) unless some ingress rule
 * allows that local port from some address; allowed ones are marked, so
 * that cgroup_skb/ingress decides the UDP datagrams they receive. Port 0
 * (the kernel picks an ephemeral one) passes unmarked: a client's socket,
 * like the ones connect() and sendmsg() bind implicitly (which never run
 * this hook). Ping sockets have a bind of their own and never reach it. */
static __always_inline int bind_port(struct bpf_sock_addr* ctx, __u8 family) {
  __u16 port = bpf_ntohs((__u16)ctx->user_port);
  if (port == 0) return 1;
  __u8 proto = ctx->type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
  __u32 gen = generation() & 1;
  struct verdict v = entry_verdict(gen, bpf_map_lookup_elem(&in_bind, &gen), proto, port);
  if (!v.allow) {
    __u32 none[4] = {};
    report_local(gen, WARD_HOOK_BIND, family, proto, 0, port, none, 0);
    return 0;
  }
  if (ctx->sk) bpf_sk_storage_get(&ingress_socks, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
  return 1;
}

SEC("cgroup/bind4")
int ward_bind4(struct bpf_sock_addr* ctx) { return bind_port(ctx, 4); }

SEC("cgroup/bind6")
int ward_bind6(struct bpf_sock_addr* ctx) { return bind_port(ctx, 6); }

/* offsetof(struct sockaddr_un, sun_path) */
#define SUN_PATH_OFFSET 2

/* Refuses a unix address, with an event naming it. */
static __always_inline int refuse_unix(__u32 gen, __u8 hook, const struct ward_unix_key* k,
                                       __u32 rule) {
  struct ward_event* ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
  if (!ev) return 0;
  __builtin_memset(ev, 0, sizeof(*ev));
  ev->generation = gen & 1;
  ev->pid = bpf_get_current_pid_tgid() >> 32;
  ev->rule = rule;
  ev->hook = hook;
  ev->family = WARD_FAMILY_UNIX;
  ev->unix_abstract = k->abstract;
  ev->unix_len = k->len;
  __builtin_memcpy(ev->unix_name, k->name, WARD_UNIX_NAME);
  bpf_ringbuf_submit(ev, 0);
  return 0;
}

/* connect() and sendmsg() with an address on an AF_UNIX socket. The kernel
 * has validated the address (sun_family, 2 < uaddrlen <= 110) and copied it
 * into its own buffer, which is what it resolves after us: no TOCTOU. A
 * path is compared byte for byte as the process spelled it (relative paths,
 * symlinks, `..` or `//` match only a rule that names them so: none does);
 * the bytes after its first NUL are ignored, as the kernel ignores them. */
static __always_inline int unix_addr(struct bpf_sock_addr* ctx, __u8 hook) {
  const __u64 state = ward_state();
  const __u32 gen = state & WARD_STATE_GENERATION;
  struct ward_unix_key k;
  __builtin_memset(&k, 0, sizeof(k));
  k.generation = gen;
  struct bpf_sock_addr_kern* sa = bpf_cast_to_kern_ctx(ctx);
  const char* sun_path = (const char*)sa->uaddr + SUN_PATH_OFFSET;
  /* 64-bit, so that the bounds checked are those of the register passed. */
  __u64 n = (__u64)sa->uaddrlen - SUN_PATH_OFFSET;
  if (n < 1 || n > WARD_UNIX_NAME) return refuse_unix(gen, hook, &k, 0);
  if (bpf_probe_read_kernel(k.name, n, sun_path)) return refuse_unix(gen, hook, &k, 0);
  if (k.name[0] == 0) {
    k.abstract = 1;
    if ((state >> WARD_STATE_FLAGS_SHIFT) & WARD_CFG_UNIX_ABSTRACT_OPEN) return 1;
    /* The name: every byte after the leading NUL. */
    __u64 len = n - 1;
    if (len > WARD_UNIX_NAME - 1) return refuse_unix(gen, hook, &k, 0);
    __builtin_memset(k.name, 0, sizeof(k.name));
    if (len && bpf_probe_read_kernel(k.name, len, sun_path + 1))
      return refuse_unix(gen, hook, &k, 0);
    k.len = len;
  } else {
    /* Up to the first NUL; what follows it is zeroed (branch free). */
    __u32 keep = 1, len = 0;
#pragma unroll
    for (int i = 0; i < WARD_UNIX_NAME; i++) {
      keep &= ((__u32)(__u8)k.name[i] + 255) >> 8;
      k.name[i] = (char)((__u8)k.name[i] * keep);
      len += keep;
    }
    k.len = len;
  }
  __u32* v = bpf_map_lookup_elem(&unix_names, &k);
  if (v && *v == WARD_ALLOW) return 1;
  return refuse_unix(gen, hook, &k, v ? *v : 0);
}

/* Sockets without an address (socketpair, an accepted connection, a
 * connected socket's send) never reach these hooks. */
SEC("cgroup/connect_unix")
int ward_connect_unix(struct bpf_sock_addr* ctx) { return unix_addr(ctx, WARD_HOOK_CONNECT); }

SEC("cgroup/sendmsg_unix")
int ward_sendmsg_unix(struct bpf_sock_addr* ctx) { return unix_addr(ctx, WARD_HOOK_SENDMSG); }

/* TCP (stream, protocol 0 or TCP), UDP (datagram, 0 or UDP) and ping
 * sockets (datagram, ICMP / ICMPv6) only: raw, SCTP, MPTCP, UDP-Lite and
 * every other inet socket is refused (EPERM) at creation. */
SEC("cgroup/sock_create")
int ward_sock_create(struct bpf_sock* ctx) {
  __u32 family = ctx->family, type = ctx->type, proto = ctx->protocol;
  if (family == AF_INET || family == AF_INET6) {
    if (type == SOCK_STREAM && (proto == 0 || proto == IPPROTO_TCP)) return 1;
    if (type == SOCK_DGRAM && (proto == 0 || proto == IPPROTO_UDP)) return 1;
    if (type == SOCK_DGRAM && family == AF_INET && proto == IPPROTO_ICMP) return 1;
    if (type == SOCK_DGRAM && family == AF_INET6 && proto == IPPROTO_ICMPV6) return 1;
  }
  struct ward_event* ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
  if (ev) {
    __builtin_memset(ev, 0, sizeof(*ev));
    ev->generation = generation() & 1;
    ev->pid = bpf_get_current_pid_tgid() >> 32;
    ev->hook = WARD_HOOK_SOCKET;
    ev->sock_type = family << 16 | (type & 0xffff);
    ev->sock_proto = proto;
    bpf_ringbuf_submit(ev, 0);
  }
  return 0;
}

/* The backstop: packets the address hooks may not have decided (ICMP over
 * ping sockets, connected UDP after a narrowing, a TCP SYN sent without
 * connect()). TCP segments other than a first SYN belong to flows decided at
 * connect (or accepted ones: ingress is not decided here). */
SEC("cgroup_skb/egress")
int ward_egress(struct __sk_buff* skb) {
  __u32 gen = generation();
  __u8 proto, l4[4] = {};
  __u16 port = 0;
  struct verdict v;
  if (skb->protocol == bpf_htons(ETH_P_IP)) {
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip))) return 0;
    __u32 off = (ip.ihl & 0xf) * 4;
    proto = ip.protocol;
    if (proto == IPPROTO_TCP) {
      __u8 flags;
      if (bpf_skb_load_bytes(skb, off + 13, &flags, 1)) return 0;
      if ((flags & 0x12) != 0x02) return 1; /* not a first SYN */
    }
    if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
      if (bpf_skb_load_bytes(skb, off, l4, 4)) return 0;
      port = (__u16)l4[2] << 8 | l4[3];
    } else if (proto != IPPROTO_ICMP) {
      report(gen, WARD_HOOK_PACKET, 4, proto, 0, &ip.daddr, 0);
      return 0;
    }
    v = decide4(gen, ip.daddr, proto, port);
    if (v.allow) return 1;
    report(gen, WARD_HOOK_PACKET, 4, proto, port, &ip.daddr, v.rule);
    return 0;
  }
  if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr ip6;
    if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6))) return 0;
    __u32 a[4];
    __builtin_memcpy(a, &ip6.daddr, 16);
    proto = ip6.nexthdr;
    if (proto == IPPROTO_TCP) {
      __u8 flags;
      if (bpf_skb_load_bytes(skb, sizeof(ip6) + 13, &flags, 1)) return 0;
      if ((flags & 0x12) != 0x02) return 1;
    }
    if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
      if (bpf_skb_load_bytes(skb, sizeof(ip6), l4, 4)) return 0;
      port = (__u16)l4[2] << 8 | l4[3];
    } else if (proto == IPPROTO_ICMPV6) {
      proto = IPPROTO_ICMP;
    } else {
      /* Extension headers are not walked: refused (fails closed). */
      report(gen, WARD_HOOK_PACKET, 6, proto, 0, a, 0);
      return 0;
    }
    v = decide6(gen, a, proto, port);
    if (v.allow) return 1;
    report(gen, WARD_HOOK_PACKET, is_mapped(a) ? 4 : 6, proto, port, is_mapped(a) ? &a[3] : a,
           v.rule);
    return 0;
  }
  return 1; /* not IP (ARP has no socket here) */
}

/* Ingress, stateless: what arrives at a socket of the cgroup. A TCP SYN
 * without ACK (a new connection to a listener) and a UDP datagram to an
 * explicitly bound, unconnected socket are decided by the ingress partition
 * (source address, local port); everything else passes: TCP segments of
 * established flows and handshakes the workload started, datagrams to
 * connected UDP sockets (the kernel delivers them only their peer's, which
 * connect decided) and to implicitly bound ones, ICMP to ping sockets (echo
 * replies: the kernel answers echo requests itself, no socket sees them).
 * A packet whose protocol is not the socket's (IPv6 extension headers are
 * not walked) is dropped. */
SEC("cgroup_skb/ingress")
int ward_ingress(struct __sk_buff* skb) {
  struct bpf_sock* sk = skb->sk;
  if (!sk) return 1;
  sk = bpf_sk_fullsock(sk);
  if (!sk) return 1;
  __u8 sproto = sk->protocol;
  if (sproto == IPPROTO_UDP) {
    if (sk->state == BPF_TCP_ESTABLISHED_STATE) return 1;
    if (!bpf_sk_storage_get(&ingress_socks, sk, 0, 0)) return 1;
  } else if (sproto != IPPROTO_TCP) {
    return 1;
  }
  __u32 gen = generation() & 1;
  __u8 l4[4] = {};
  __u32 a[4] = {};
  __u32 off;
  __u8 proto, family;
  if (skb->protocol == bpf_htons(ETH_P_IP)) {
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip))) return 0;
    off = (ip.ihl & 0xf) * 4;
    proto = ip.protocol;
    a[0] = ip.saddr;
    family = 4;
  } else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr ip6;
    if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6))) return 0;
    off = sizeof(ip6);
    proto = ip6.nexthdr;
    __builtin_memcpy(a, &ip6.saddr, 16);
    family = is_mapped(a) ? 4 : 6;
  } else {
    return 1;
  }
  /* The address events name: a mapped one by its IPv4 part. */
  const __u32* src = skb->protocol == bpf_htons(ETH_P_IPV6) && family == 4 ? &a[3] : a;
  if (proto != sproto) {
    report(gen, WARD_HOOK_ACCEPT, family, proto, 0, src, 0);
    return 0;
  }
  if (proto == IPPROTO_TCP) {
    __u8 flags;
    if (bpf_skb_load_bytes(skb, off + 13, &flags, 1)) return 0;
    if ((flags & 0x12) != 0x02) return 1; /* not a first SYN */
  }
  if (bpf_skb_load_bytes(skb, off, l4, 4)) return 0;
  __u16 sport = (__u16)l4[0] << 8 | l4[1], dport = (__u16)l4[2] << 8 | l4[3];
  struct verdict v;
  if (skb->protocol == bpf_htons(ETH_P_IP))
    v = ingress4(gen, a[0], proto, dport);
  else
    v = ingress6(gen, a, proto, dport);
  if (v.allow) return 1;
  report_local(gen, WARD_HOOK_ACCEPT, family, proto, sport, dport, src, v.rule);
  return 0;
}

/* The flow cutter, run by the enforcer after each generation flip: every
 * TCP socket that connect4/6 saw, in the enforced cgroup or below it, whose
 * destination the active generation refuses, is destroyed (its owner gets
 * ECONNABORTED). */
SEC("iter/tcp")
int ward_cut_tcp(struct bpf_iter__tcp* ctx) {
  struct sock_common* skc = ctx->sk_common;
  if (!skc) return 0;
  struct tcp_sock* tp = bpf_skc_to_tcp_sock(skc);
  if (!tp) return 0;
  struct sock* sk = (struct sock*)tp;
  if (sk->__sk_common.skc_state == TCP_LISTEN) return 0;
  if (!bpf_sk_storage_get(&egress_socks, sk, 0, 0)) return 0;

  __u32 zero = 0;
  struct ward_config* c = bpf_map_lookup_elem(&ward_cfg, &zero);
  if (!c) return 0;
  __u32 gen = flags_gen_of(*(volatile __u64*)&c->state);
  __u32 level = c->cgroup_level;
  struct cgroup* cg = BPF_CORE_READ(sk, sk_cgrp_data.cgroup);
  if (!cg) return 0;
  if (BPF_CORE_READ(cg, level) < (int)level || level > 255) return 0;
  struct cgroup* anc = 0;
  bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level]);
  if (!anc || BPF_CORE_READ(anc, kn, id) != c->cgroup_id) return 0;

  __u16 port = bpf_ntohs(sk->__sk_common.skc_dport);
  struct verdict v;
  if (sk->__sk_common.skc_family == AF_INET) {
    v = decide4(gen, sk->__sk_common.skc_daddr, IPPROTO_TCP, port);
  } else {
    __u32 a[4];
    __builtin_memcpy(a, &sk->__sk_common.skc_v6_daddr, 16);
    v = decide6(gen, a, IPPROTO_TCP, port);
  }
  if (!v.allow) bpf_sock_destroy(skc);
  return 0;
}
