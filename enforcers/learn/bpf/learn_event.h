/* The events `ward learn`'s recorder (learn.bpf.c) sends to user space
 * (enforcers/learn/recorder.cc) through its ring buffer. Plain C,
 * fixed-width types only, so both compilers agree on every byte. */
#ifndef WARD_LEARN_EVENT_H_
#define WARD_LEARN_EVENT_H_

#ifdef __bpf__
typedef __u16 learn_u16;
typedef __u32 learn_u32;
typedef __u64 learn_u64;
#else
#include <stdint.h>
typedef uint16_t learn_u16;
typedef uint32_t learn_u32;
typedef uint64_t learn_u64;
#endif

/* A path as the dentry walk writes it: its components from the leaf up,
 * each NUL-terminated (`ncomp` of them), up to LEARN_PATH bytes of them;
 * a component's copy may take LEARN_NAME more. */
#define LEARN_PATH 1024
#define LEARN_NAME 256
#define LEARN_BUF (LEARN_PATH + LEARN_NAME)
#define LEARN_DEPTH 48
#define LEARN_DNS (2 * LEARN_BUF)
/* At most this many bytes of a DNS message are copied, less one. */
#define LEARN_DNS_COPY 2048

/* The longest path string a syscall's argument is copied with. */
#define LEARN_STR 512

enum learn_kind {
  LEARN_OPEN = 1, /* flags: f_mode; mode: i_mode; path: the file opened */
  LEARN_EXEC = 2, /* path: the file executed; str: the name given, path2: the CWD */
  /* The next four: path is the directory a relative str is resolved from
   * (the dirfd's, or the working directory), path2 and str2 the same for a
   * second name (rename, link: the new one). */
  LEARN_CREATE = 3,     /* mkdir, mknod, symlink, link: str */
  LEARN_DELETE = 4,     /* unlink, rmdir: str */
  LEARN_RENAME = 5,     /* str: the old name; str2: the new one */
  LEARN_CONNECT = 8,    /* family, type, protocol, port, addr (or unix: its sun_path) */
  LEARN_BIND = 9,       /* as LEARN_CONNECT */
  LEARN_SOCKET = 10,    /* family, type, protocol */
  LEARN_SYSCALL = 11,   /* nr, arg: the argument kept for it (0 else) */
  LEARN_DNS_REPLY = 12, /* len bytes of a DNS message in dns */
};

/* The syscalls the recorder follows past their return, by role: user space
 * fills `call_nr` (learn.bpf.c) with their numbers on this architecture,
 * in this order (recorder.cc: kCalls). */
enum learn_call {
  CALL_OPEN,
  CALL_OPENAT,
  CALL_OPENAT2,
  CALL_CREAT,
  CALL_MKDIR,
  CALL_MKDIRAT,
  CALL_MKNOD,
  CALL_MKNODAT,
  CALL_SYMLINK,
  CALL_SYMLINKAT,
  CALL_LINK,
  CALL_LINKAT,
  CALL_UNLINK,
  CALL_UNLINKAT,
  CALL_RMDIR,
  CALL_RENAME,
  CALL_RENAMEAT,
  CALL_RENAMEAT2,
  CALL_CONNECT,
  CALL_BIND,
  CALL_SOCKET,
  CALL_COUNT
};

struct learn_event {
  learn_u32 kind;
  learn_u32 pid;
  learn_u32 flags;         /* f_mode; for sockets: the type */
  learn_u32 mode;          /* i_mode; for sockets: the protocol */
  learn_u32 family;        /* sockets */
  learn_u32 port;          /* sockets: host order */
  learn_u64 nr;            /* syscalls */
  learn_u64 arg;           /* syscalls */
  learn_u32 len;           /* DNS message length; unix: address length */
  learn_u16 ncomp, ncomp2; /* components in path, path2 */
  learn_u32 truncated;     /* a walk stopped before the root: 1 path, 2 path2 */
  unsigned char addr[16];  /* IPv4 in the first 4 bytes, or IPv6 */
  union {
    struct {
      char path[LEARN_BUF];
      char path2[LEARN_BUF];
      char str[LEARN_STR];
      char str2[LEARN_STR];
    } p;
    unsigned char dns[LEARN_DNS];
  } u;
};

#endif
