/* Stub of kafel's test/runner/harness.h: every TEST_POLICY /
 * TEST_COMPILE_ERROR records its policy string (exactly as the C compiler
 * built it, so sprintf loops and computed buffers are expanded) instead of
 * running it. kafel_set_input_string is wrapped so that the one test that
 * calls the kafel API directly is recorded too. TEST_POLICY_{ALLOWS,BLOCKS}_
 * SYSCALL record (nr, args, expected seccomp_ret); the function-based verdict
 * macros are no-ops. */
#ifndef WARD_KAFEL_DUMP_HARNESS_H_
#define WARD_KAFEL_DUMP_HARNESS_H_

#include <kafel.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>

void dump_record(const char* kind, int line, const char* src);
void dump_set_input_string(kafel_ctxt_t ctxt, const char* src, int line);

#define TEST_POLICY(src) dump_record("TEST_POLICY", __LINE__, (src))
#define TEST_COMPILE_ERROR(src) dump_record("TEST_COMPILE_ERROR", __LINE__, (src))
#define kafel_set_input_string(ctxt, src) dump_set_input_string((ctxt), (src), __LINE__)
#define TEST_POLICY_ALLOWS(...) ((void)0)
#define TEST_POLICY_BLOCKS(...) ((void)0)
/* Syscall verdict checks are recorded too (kafel's SYSCALL_SPEC layout: host
 * AUDIT_ARCH, ip 0xf00f00f0deadbeef, up to 6 args; expected seccomp_ret). */
typedef struct {
  uint32_t seccomp_ret;
  long rv;
  long expected_errno;
} syscall_result_spec_t;
#define SYSCALL_SPEC0(nr) SYSCALL_SPEC1((nr), 0)
#define SYSCALL_SPEC1(nr, arg0) SYSCALL_SPEC2((nr), (arg0), 0)
#define SYSCALL_SPEC2(nr, arg0, arg1) SYSCALL_SPEC3((nr), (arg0), (arg1), 0)
#define SYSCALL_SPEC3(nr, arg0, arg1, arg2) SYSCALL_SPEC4((nr), (arg0), (arg1), (arg2), 0)
#define SYSCALL_SPEC4(nr, arg0, arg1, arg2, arg3) \
  SYSCALL_SPEC5((nr), (arg0), (arg1), (arg2), (arg3), 0)
#define SYSCALL_SPEC5(nr, arg0, arg1, arg2, arg3, arg4) \
  SYSCALL_SPEC6((nr), (arg0), (arg1), (arg2), (arg3), (arg4), 0)
#define SYSCALL_SPEC6(nr, arg0, arg1, arg2, arg3, arg4, arg5) \
  ((struct seccomp_data){(nr),                                \
                         AUDIT_ARCH_X86_64,                   \
                         0xf00f00f0deadbeefLL,                \
                         {(arg0), (arg1), (arg2), (arg3), (arg4), (arg5)}})
#define SYSCALL_KILLED_SPEC() ((syscall_result_spec_t){SECCOMP_RET_KILL, 0, 0})
#define SYSCALL_EXECUTED_SPEC(rv, err) ((syscall_result_spec_t){SECCOMP_RET_ALLOW, (rv), (err)})
#define SYSCALL_ERRNO_SPEC(err) ((syscall_result_spec_t){SECCOMP_RET_ERRNO | (err), -1, (err)})
void dump_check(int line, struct seccomp_data d, uint32_t expected_ret);
#define TEST_POLICY_ALLOWS_SYSCALL(spec, result) dump_check(__LINE__, (spec), (result).seccomp_ret)
#define TEST_POLICY_BLOCKS_SYSCALL(spec) dump_check(__LINE__, (spec), SECCOMP_RET_KILL)
#define TEST_POLICY_ALLOWS_SYSCALLS(...) ((void)0)
#define TEST_POLICY_BLOCKS_SYSCALLS(...) ((void)0)
#define TEST_POLICY_ENFORCMENT(...) ((void)0)
#define TEST_POLICY_ENFORCMENT_SYSCALL(...) ((void)0)
#define TEST_POLICY_ENFORCMENT_SYSCALLS(...) ((void)0)

#endif
