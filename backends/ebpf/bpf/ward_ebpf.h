/* The layout shared by the BPF programs (ward.bpf.c) and user space
 * (backends/ebpf, enforcers/linux/ebpf.cc): map keys, values and events.
 * Plain C, fixed-width types only, so both compilers agree on every byte. */
#ifndef WARD_EBPF_H_
#define WARD_EBPF_H_

#ifdef __bpf__
typedef __u8 ward_u8;
typedef __u16 ward_u16;
typedef __u32 ward_u32;
typedef __u64 ward_u64;
#else
#include <stdint.h>
typedef uint8_t ward_u8;
typedef uint16_t ward_u16;
typedef uint32_t ward_u32;
typedef uint64_t ward_u64;
#endif

/* Two generations live side by side in every map (the generation is part of
 * the key); the programs read the active one from `config` once per run. */
#define WARD_GENERATIONS 2
/* Port sets per generation, segments per port set; deny rule texts (both
 * generations). */
#define WARD_MAX_PORTSETS 1024
#define WARD_MAX_SEGMENTS 64
#define WARD_MAX_RULE_TEXTS (1u << 17)
#define WARD_RULE_TEXT 120
/* In a segment's or an entry's verdict: allowed (else the low bits are the
 * refusing rule's id, 0 for none). */
#define WARD_ALLOW 0x80000000u
/* Address entries (both generations together) per map. */
#define WARD_MAX_ENTRIES (1u << 20)
/* Unix socket names (both generations together); the bytes of sun_path. */
#define WARD_MAX_UNIX_NAMES (1u << 16)
#define WARD_UNIX_NAME 108

/* The ingress partition has maps of its own (`in4_exact`, `in6_exact`,
 * `in4_lpm`, `in6_lpm`: keys and entries as egress, keyed by the remote
 * address, the port sets over the local port) and `in_bind`, an ARRAY
 * indexed by generation: the ports some ingress rule allows from some
 * address, as a ward_entry (tcp_set, udp_set). */

/* The one element of the mmapable ARRAY `ward_cfg`. Everything a generation
 * flip changes lives in `state`, one aligned 8-byte word: the programs read
 * it with one 8-byte load and user space writes it with one atomic 8-byte
 * store through the map's mmap()ed page (an ARRAY update is an in-place
 * copy: a program could see the new generation with the old flags). */
struct ward_config {
  ward_u64 state;        /* WARD_STATE_GENERATION | WARD_CFG_* << 32 */
  ward_u64 cgroup_id;    /* the enforced cgroup's id (kernfs node id), fixed */
  ward_u32 cgroup_level; /* its level (the flow cutter), fixed */
  ward_u32 pad;
};
/* In `state`: the generation every program decides by (0 or 1). */
#define WARD_STATE_GENERATION 1ull
#define WARD_STATE_FLAGS_SHIFT 32
/* Flags (state >> 32): the `*_dom` maps hold entries: programs look there
 * first. */
#define WARD_CFG_DOMAINS 1u
/* Abstract unix addresses are let through: another layer (ward run's
 * Landlock scope) decides them. */
#define WARD_CFG_UNIX_ABSTRACT_OPEN 2u

/* One port range of a port set: allowed, or refused by `rule` (1-based index
 * into the policy's network rules; 0: no rule matched). Ports in no segment
 * are refused with no rule matched. */
struct ward_segment {
  ward_u16 lo;
  ward_u16 hi;
  ward_u32 verdict; /* WARD_ALLOW, or the rule id */
};

struct ward_portset {
  ward_u32 count; /* segments used, sorted by lo, disjoint */
  ward_u32 pad;
  struct ward_segment seg[WARD_MAX_SEGMENTS];
};

/* What one piece of the partition allows. Port set 0 of each generation is
 * the empty set. */
struct ward_entry {
  ward_u16 tcp_set;
  ward_u16 udp_set;
  ward_u32 icmp; /* ICMP / ICMPv6: WARD_ALLOW, or the refusing rule id */
};

/* An address a granted name resolved to (HASH `v4_dom`/`v6_dom`, keyed like
 * the exact maps): its decision (the address's own, plus what the names
 * allow, minus the address denies) until `expires_ns` on the boot-time clock
 * (bpf_ktime_get_boot_ns); after that the exact and LPM maps decide, as if
 * the name had never resolved there. */
struct ward_timed_entry {
  struct ward_entry entry;
  ward_u64 expires_ns;
};

struct ward_v4_key { /* HASH: one address */
  ward_u32 generation;
  ward_u8 addr[4];
};
struct ward_v6_key {
  ward_u32 generation;
  ward_u8 addr[16];
};
struct ward_v4_lpm_key { /* LPM_TRIE: prefixlen counts the 32 generation bits */
  ward_u32 prefixlen;
  ward_u32 generation;
  ward_u8 addr[4];
};
struct ward_v6_lpm_key {
  ward_u32 prefixlen;
  ward_u32 generation;
  ward_u8 addr[16];
};

/* The texts of the deny rules, for events (HASH `rules`). */
struct ward_rule_key {
  ward_u32 generation;
  ward_u32 id;
};
struct ward_rule_text {
  char text[WARD_RULE_TEXT];
};

/* A unix socket name (HASH `unix_names`) -> a __u32 verdict: WARD_ALLOW,
 * or the id of the deny rule refusing it. A path is the bytes of sun_path up
 * to the first NUL, exactly as the process passed them; an abstract name is
 * the `len` bytes after sun_path's leading NUL (NULs included). Zero
 * padded, so equal names have equal keys. */
struct ward_unix_key {
  ward_u32 generation;
  ward_u8 abstract;
  ward_u8 len;
  ward_u16 pad;
  char name[WARD_UNIX_NAME];
};

enum ward_hook {
  WARD_HOOK_CONNECT = 1,
  WARD_HOOK_SENDMSG = 2,
  WARD_HOOK_SOCKET = 3,
  WARD_HOOK_PACKET = 4, /* cgroup_skb/egress backstop */
  WARD_HOOK_BIND = 5,   /* cgroup/bind4, bind6: `local_port` is the port asked for */
  WARD_HOOK_ACCEPT = 6, /* cgroup_skb/ingress: a TCP SYN or a UDP datagram arriving */
};

/* A denial, in the ring buffer `events`. */
struct ward_event {
  ward_u32 generation;
  ward_u32 pid;
  ward_u32 rule;  /* 0: no rule matched */
  ward_u8 hook;   /* enum ward_hook */
  ward_u8 family; /* 4 or 6 (the decision's family: a mapped address is 4),
                     or WARD_FAMILY_UNIX */
  ward_u8 proto;  /* IPPROTO_TCP / _UDP / _ICMP (ICMPv6 reported as ICMP) */
  ward_u8 pad;
  ward_u16 port;       /* host order; ingress: the remote port */
  ward_u16 local_port; /* WARD_HOOK_ACCEPT, _BIND: the local port, host order */
  ward_u32 sock_type;  /* WARD_HOOK_SOCKET: the refused socket's family << 16 | type */
  ward_u32 sock_proto; /* WARD_HOOK_SOCKET: its protocol */
  ward_u8 addr[16];    /* v4 in the first 4 bytes; ingress: the source */
  /* WARD_FAMILY_UNIX: the name connected or sent to, as in ward_unix_key. */
  ward_u8 unix_abstract;
  ward_u8 unix_len;
  ward_u16 pad3;
  char unix_name[WARD_UNIX_NAME];
};
#define WARD_FAMILY_UNIX 1 /* AF_UNIX */

#endif /* WARD_EBPF_H_ */
