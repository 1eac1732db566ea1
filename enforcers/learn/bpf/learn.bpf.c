// SPDX-License-Identifier: GPL-2.0
/* `ward learn`'s recorder (enforcers/learn/README.md): raw tracepoints on
 * sys_enter, sys_exit and sched_process_exec that report what the run's
 * cgroup tree does to files, executables and sockets and each syscall it
 * makes (once), and a cgroup_skb program that copies the DNS replies its
 * sockets receive. Everything goes to one ring buffer; a full buffer counts
 * a drop. Nothing is refused: these programs only watch.
 *
 * Why tracepoints and not BPF LSM programs: this kernel lists bpf among its
 * LSMs but refuses to load any program that needs a BPF trampoline (lsm/,
 * fentry/, fexit/: EPERM before the verifier runs), and has no kprobes
 * (CONFIG_KPROBES, CONFIG_FPROBE off). So a file is named after the
 * syscall that opened it returned: its descriptor's struct file, whose
 * f_path is walked up to the root (walk(), crossing mounts as d_path does;
 * bpf_d_path and bpf_path_d_path need an LSM or fentry program). A create,
 * delete or rename is named by its string argument and the directory it
 * is relative to (the dirfd's file, or the working directory), walked the
 * same way, once the syscall returned 0.
 *
 * Events count only from the run's first exec (the workload's execve): what
 * ward run's child does before it is ward's, not the workload's. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "learn_event.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define AT_FDCWD -100
#define FMODE_PATH (1u << 14)

/* Set by user space before loading. */
const volatile __u64 target_cgid = 0;
const volatile __u32 target_level = 0;
/* Syscalls whose first argument is kept (clone, socket, personality: what
 * linux-base's conditional rules test); -1 for none. */
const volatile __s64 arg0_nr[4] = {-1, -1, -1, -1};
/* enum learn_call's syscall numbers; -1 where the architecture lacks one. */
const volatile __s64 call_nr[CALL_COUNT] = {};

__u32 armed = 0;
__u64 drops = 0;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 16 << 20);
} learn_rb SEC(".maps");

struct syscall_key {
  __u64 nr;
  __u64 arg;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 8192);
  __type(key, struct syscall_key);
  __type(value, __u8);
} seen_syscalls SEC(".maps");

/* A followed syscall between its entry and its return, by thread. */
struct pending {
  __u32 call; /* enum learn_call */
  __u32 pad;
  __u64 args[6];
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, struct pending);
} pending_calls SEC(".maps");

static __always_inline int in_run(void) {
  return bpf_get_current_ancestor_cgroup_id(target_level) == target_cgid;
}

static __always_inline struct learn_event* reserve(__u32 kind) {
  struct learn_event* ev = bpf_ringbuf_reserve(&learn_rb, sizeof(*ev), 0);
  if (!ev) {
    __sync_fetch_and_add(&drops, 1);
    return 0;
  }
  ev->kind = kind;
  ev->pid = bpf_get_current_pid_tgid() >> 32;
  ev->flags = ev->mode = ev->family = ev->port = ev->len = ev->truncated = 0;
  ev->ncomp = ev->ncomp2 = 0;
  ev->nr = ev->arg = 0;
  __builtin_memset(ev->addr, 0, sizeof(ev->addr));
  ev->u.p.str[0] = ev->u.p.str2[0] = 0;
  return ev;
}

/* Scratch space for a walk: bpf_loop's callback writes the components
 * here; the caller copies them into the event. */
struct walk_buf {
  char path[LEARN_BUF];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct walk_buf);
} walk_scratch SEC(".maps");

struct walk_state {
  struct mount* mnt;
  struct dentry* dentry;
  __u32 off;
  __u16 n;
  __u16 done;
};

/* One step up: a component copied, or a mount crossed. */
static long walk_step(__u32 i, void* ctx) {
  struct walk_state* w = ctx;
  __u32 zero = 0;
  struct walk_buf* buf = bpf_map_lookup_elem(&walk_scratch, &zero);
  if (!buf) return 1;
  struct mount* mnt = w->mnt;
  struct dentry* dentry = w->dentry;
  struct dentry* root = BPF_CORE_READ(mnt, mnt.mnt_root);
  struct dentry* parent = BPF_CORE_READ(dentry, d_parent);
  if (dentry == root) {
    struct mount* up = BPF_CORE_READ(mnt, mnt_parent);
    if (up == mnt) { /* the namespace's root */
      w->done = 1;
      return 1;
    }
    w->dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
    w->mnt = up;
    return 0;
  }
  if (dentry == parent) { /* a file system's root that is no mount's (a pipe) */
    return 1;
  }
  if (w->off >= LEARN_PATH) return 1;
  const unsigned char* name = BPF_CORE_READ(dentry, d_name.name);
  long len = bpf_probe_read_kernel_str(buf->path + (w->off & (LEARN_PATH - 1)), LEARN_NAME, name);
  if (len <= 0) return 1;
  w->off += len;
  w->n++;
  w->dentry = parent;
  return 0;
}

/* The path of (vfsmount, dentry) into out, as learn_event.h lays it out:
 * from the dentry up to its mount's root, then on from the mount point in
 * the parent mount, up to the root of the mount namespace. */
static __always_inline __u16 walk(struct vfsmount* vfsmnt, struct dentry* dentry, char* out,
                                  __u32* truncated, __u32 bit) {
  struct walk_state w = {
      .mnt = (struct mount*)((char*)vfsmnt - __builtin_offsetof(struct mount, mnt)),
      .dentry = dentry,
  };
  bpf_loop(2 * LEARN_DEPTH, walk_step, &w, 0);
  if (!w.done) *truncated |= bit;
  __u32 zero = 0;
  struct walk_buf* buf = bpf_map_lookup_elem(&walk_scratch, &zero);
  if (buf) bpf_probe_read_kernel(out, LEARN_BUF, buf->path);
  return w.n;
}

static __always_inline struct file* fd_file(long fd) {
  struct task_struct* t = (struct task_struct*)bpf_get_current_task();
  struct fdtable* fdt = BPF_CORE_READ(t, files, fdt);
  unsigned int max = BPF_CORE_READ(fdt, max_fds);
  if (fd < 0 || fd >= max) return 0;
  struct file** fds = BPF_CORE_READ(fdt, fd);
  struct file* f = 0;
  bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
  return f;
}

/* The directory a relative name in a *at() call is resolved from. */
static __always_inline __u16 walk_dirfd(long dfd, char* out, __u32* truncated, __u32 bit) {
  if ((int)dfd == AT_FDCWD) {
    struct task_struct* t = (struct task_struct*)bpf_get_current_task();
    return walk(BPF_CORE_READ(t, fs, pwd.mnt), BPF_CORE_READ(t, fs, pwd.dentry), out, truncated,
                bit);
  }
  struct file* f = fd_file(dfd);
  if (!f) {
    *truncated |= bit;
    return 0;
  }
  return walk(BPF_CORE_READ(f, f_path.mnt), BPF_CORE_READ(f, f_path.dentry), out, truncated, bit);
}

static __always_inline int find_call(__u64 nr) {
  for (int i = 0; i < CALL_COUNT; i++) {
    if (call_nr[i] >= 0 && (__u64)call_nr[i] == nr) return i;
  }
  return -1;
}

static __always_inline void report_sockaddr(__u32 kind, long fd, const void* uaddr, long addrlen) {
  struct learn_event* ev = reserve(kind);
  if (!ev) return;
  struct file* f = fd_file(fd);
  struct socket* sock = f ? BPF_CORE_READ(f, private_data) : 0;
  if (sock) {
    ev->flags = BPF_CORE_READ(sock, type);
    ev->mode = BPF_CORE_READ(sock, sk, sk_protocol);
  }
  __u16 family = 0;
  bpf_probe_read_user(&family, sizeof(family), uaddr);
  ev->family = family;
  if (family == AF_INET) {
    const struct sockaddr_in* in = uaddr;
    __u16 port = 0;
    bpf_probe_read_user(&port, sizeof(port), &in->sin_port);
    ev->port = bpf_ntohs(port);
    bpf_probe_read_user(ev->addr, 4, &in->sin_addr);
  } else if (family == AF_INET6) {
    const struct sockaddr_in6* in6 = uaddr;
    __u16 port = 0;
    bpf_probe_read_user(&port, sizeof(port), &in6->sin6_port);
    ev->port = bpf_ntohs(port);
    bpf_probe_read_user(ev->addr, 16, &in6->sin6_addr);
  } else if (family == AF_UNIX) {
    const struct sockaddr_un* un = uaddr;
    __u64 n = addrlen > 2 ? (__u64)addrlen - 2 : 0;
    if (n > 108) n = 108;
    asm volatile("%[n] &= 127" : [n] "+r"(n));
    ev->len = n;
    if (n > 0) bpf_probe_read_user(ev->u.p.path, n, un->sun_path);
  }
  bpf_ringbuf_submit(ev, 0);
}

SEC("raw_tracepoint/sys_enter")
int learn_sys_enter(struct bpf_raw_tracepoint_args* ctx) {
  if (!armed || !in_run()) return 0;
  struct pt_regs* regs = (struct pt_regs*)ctx->args[0];
  const __u64 nr = ctx->args[1];
  struct syscall_key key = {.nr = nr, .arg = 0};
  for (int i = 0; i < 4; i++) {
    if (arg0_nr[i] >= 0 && (__u64)arg0_nr[i] == nr) key.arg = PT_REGS_PARM1_CORE_SYSCALL(regs);
  }
  __u8 one = 1;
  if (bpf_map_update_elem(&seen_syscalls, &key, &one, BPF_NOEXIST) == 0) {
    struct learn_event* ev = reserve(LEARN_SYSCALL);
    if (ev) {
      ev->nr = key.nr;
      ev->arg = key.arg;
      bpf_ringbuf_submit(ev, 0);
    } else {
      bpf_map_delete_elem(&seen_syscalls, &key); /* not seen after all: try again */
    }
  }
  const int call = find_call(nr);
  if (call < 0) return 0;
  struct pending p = {.call = call};
  p.args[0] = PT_REGS_PARM1_CORE_SYSCALL(regs);
  p.args[1] = PT_REGS_PARM2_CORE_SYSCALL(regs);
  p.args[2] = PT_REGS_PARM3_CORE_SYSCALL(regs);
  p.args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
  if (call == CALL_CONNECT || call == CALL_BIND) {
    /* The attempt, whatever its outcome (a non-blocking connect returns
     * EINPROGRESS). */
    report_sockaddr(call == CALL_CONNECT ? LEARN_CONNECT : LEARN_BIND, p.args[0],
                    (const void*)p.args[1], p.args[2]);
    return 0;
  }
  if (call == CALL_SOCKET) {
    struct learn_event* ev = reserve(LEARN_SOCKET);
    if (!ev) return 0;
    ev->family = p.args[0];
    ev->flags = p.args[1];
    ev->mode = p.args[2];
    bpf_ringbuf_submit(ev, 0);
    return 0;
  }
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  bpf_map_update_elem(&pending_calls, &tid, &p, BPF_ANY);
  return 0;
}

/* Where a call's names are: the index of its dirfd argument (-1:
 * AT_FDCWD) and of its string, for the first name and the second. */
struct name_args {
  int dfd, str, dfd2, str2;
};

static __always_inline struct name_args names_of(__u32 call) {
  switch (call) {
    case CALL_MKDIR:
    case CALL_MKNOD:
    case CALL_UNLINK:
    case CALL_RMDIR:
      return (struct name_args){-1, 0, -1, -1};
    case CALL_MKDIRAT:
    case CALL_MKNODAT:
    case CALL_UNLINKAT:
      return (struct name_args){0, 1, -1, -1};
    case CALL_SYMLINK:
    case CALL_LINK:
      return (struct name_args){-1, 1, -1, -1};
    case CALL_SYMLINKAT:
      return (struct name_args){1, 2, -1, -1};
    case CALL_LINKAT:
      return (struct name_args){2, 3, -1, -1};
    case CALL_RENAME:
      return (struct name_args){-1, 0, -1, 1};
    case CALL_RENAMEAT:
    case CALL_RENAMEAT2:
      return (struct name_args){0, 1, 2, 3};
  }
  return (struct name_args){-1, -1, -1, -1};
}

static __always_inline __u64 arg_at(const struct pending* p, int i) {
  switch (i) {
    case 0:
      return p->args[0];
    case 1:
      return p->args[1];
    case 2:
      return p->args[2];
    case 3:
      return p->args[3];
  }
  return 0;
}

SEC("raw_tracepoint/sys_exit")
int learn_sys_exit(struct bpf_raw_tracepoint_args* ctx) {
  if (!armed || !in_run()) return 0;
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  struct pending* found = bpf_map_lookup_elem(&pending_calls, &tid);
  if (!found) return 0;
  struct pending p = *found;
  bpf_map_delete_elem(&pending_calls, &tid);
  const long ret = (long)ctx->args[1];
  if (ret < 0) return 0;
  if (p.call <= CALL_CREAT) {
    struct file* f = fd_file(ret);
    if (!f) return 0;
    const __u32 f_mode = BPF_CORE_READ(f, f_mode);
    if (f_mode & FMODE_PATH) return 0; /* O_PATH: no access checked */
    struct learn_event* ev = reserve(LEARN_OPEN);
    if (!ev) return 0;
    ev->flags = f_mode;
    ev->mode = BPF_CORE_READ(f, f_inode, i_mode);
    ev->ncomp = walk(BPF_CORE_READ(f, f_path.mnt), BPF_CORE_READ(f, f_path.dentry), ev->u.p.path,
                     &ev->truncated, 1);
    bpf_ringbuf_submit(ev, 0);
    return 0;
  }
  const __u32 kind = p.call <= CALL_LINKAT  ? LEARN_CREATE
                     : p.call <= CALL_RMDIR ? LEARN_DELETE
                                            : LEARN_RENAME;
  const struct name_args a = names_of(p.call);
  if (a.str < 0) return 0;
  struct learn_event* ev = reserve(kind);
  if (!ev) return 0;
  bpf_probe_read_user_str(ev->u.p.str, LEARN_STR, (const char*)arg_at(&p, a.str));
  ev->ncomp =
      walk_dirfd(a.dfd < 0 ? AT_FDCWD : (long)arg_at(&p, a.dfd), ev->u.p.path, &ev->truncated, 1);
  if (a.str2 >= 0) {
    bpf_probe_read_user_str(ev->u.p.str2, LEARN_STR, (const char*)arg_at(&p, a.str2));
    ev->ncomp2 = walk_dirfd(a.dfd2 < 0 ? AT_FDCWD : (long)arg_at(&p, a.dfd2), ev->u.p.path2,
                            &ev->truncated, 2);
  }
  bpf_ringbuf_submit(ev, 0);
  return 0;
}

/* sched_process_exec(struct task_struct *p, pid_t old_pid, struct
 * linux_binprm *bprm): the file executed (path), and the name it was
 * executed by (str, against path2). The run's first one arms the
 * recorder. */
SEC("raw_tracepoint/sched_process_exec")
int learn_exec(struct bpf_raw_tracepoint_args* ctx) {
  if (!in_run()) return 0;
  armed = 1;
  struct linux_binprm* bprm = (struct linux_binprm*)ctx->args[2];
  struct learn_event* ev = reserve(LEARN_EXEC);
  if (!ev) return 0;
  ev->ncomp = walk(BPF_CORE_READ(bprm, file, f_path.mnt), BPF_CORE_READ(bprm, file, f_path.dentry),
                   ev->u.p.path, &ev->truncated, 1);
  /* A script's bprm->file is its interpreter by now: the name execve was
   * given, against the working directory, names the script, which needs
   * exec too. */
  bpf_probe_read_kernel_str(ev->u.p.str, LEARN_STR, BPF_CORE_READ(bprm, filename));
  ev->ncomp2 = walk_dirfd(AT_FDCWD, ev->u.p.path2, &ev->truncated, 2);
  bpf_ringbuf_submit(ev, 0);
  return 0;
}

/* DNS replies (source port 53, UDP or TCP) the run's sockets receive. */
SEC("cgroup_skb/ingress")
int learn_dns(struct __sk_buff* skb) {
  __u32 l4 = 0;
  __u8 proto = 0;
  if (skb->protocol == bpf_htons(ETH_P_IP)) {
    __u8 vihl = 0;
    if (bpf_skb_load_bytes(skb, 0, &vihl, 1)) return 1;
    l4 = (vihl & 15) * 4;
    if (bpf_skb_load_bytes(skb, 9, &proto, 1)) return 1;
  } else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
    l4 = 40;
    if (bpf_skb_load_bytes(skb, 6, &proto, 1)) return 1;
  } else {
    return 1;
  }
  __u16 sport = 0;
  if (proto != IPPROTO_UDP && proto != IPPROTO_TCP) return 1;
  if (bpf_skb_load_bytes(skb, l4, &sport, 2)) return 1;
  if (sport != bpf_htons(53)) return 1;
  __u32 off = l4 + 8;
  if (proto == IPPROTO_TCP) {
    __u8 doff = 0;
    if (bpf_skb_load_bytes(skb, l4 + 12, &doff, 1)) return 1;
    off = l4 + (doff >> 4) * 4 + 2; /* past the message's length prefix */
  }
  if (skb->len <= off + 12) return 1; /* no DNS header: a bare ACK */
  __u64 len = (__u64)skb->len - off;
  if (len > LEARN_DNS_COPY - 1) len = LEARN_DNS_COPY - 1;
  asm volatile("%[len] &= 2047" : [len] "+r"(len));
  if (len == 0) return 1;
  struct learn_event* ev = bpf_ringbuf_reserve(&learn_rb, sizeof(*ev), 0);
  if (!ev) {
    __sync_fetch_and_add(&drops, 1);
    return 1;
  }
  ev->kind = LEARN_DNS_REPLY;
  ev->len = len;
  if (bpf_skb_load_bytes(skb, off, ev->u.dns, len)) {
    bpf_ringbuf_discard(ev, 0);
    return 1;
  }
  bpf_ringbuf_submit(ev, 0);
  return 1;
}
