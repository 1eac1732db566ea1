/* Driver for the policy dumper (see runner/harness.h). Build:
 *   cc -I. -I$KAFEL/include main.c basic.c broken.c includes.c $KAFEL/libkafel.a
 * where basic.c, broken.c, includes.c are copied unchanged from kafel's test/.
 * Output on stdout, one record per policy string, in test execution order:
 *   "<file>\t<testcase>\t<line>\t<kind>\t<bytelen>\n" <bytes> "\n"
 * kind CHECK has the body "nr a0 a1 a2 a3 a4 a5 expected_ret" (decimal).   */
#include <inttypes.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <kafel.h>

#include "runner/runner.h"

test_case_def_t runner_tests[1024];
int runner_tests_count;
static const test_case_def_t* current;

void test_fail_with_message(const char* format, ...) { (void)format; }
void test_failed(int line, const char* file) { (void)line; (void)file; }

void dump_record(const char* kind, int line, const char* src) {
  printf("%s\t%s\t%d\t%s\t%zu\n", current->file, current->name, line, kind,
         strlen(src));
  fwrite(src, 1, strlen(src), stdout);
  putchar('\n');
}

void dump_set_input_string(kafel_ctxt_t ctxt, const char* src, int line) {
  dump_record("kafel_set_input_string", line, src);
  kafel_set_input_string(ctxt, src);
}

void dump_check(int line, struct seccomp_data d, uint32_t expected_ret) {
  char body[256];
  snprintf(body, sizeof body,
           "%" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
           " %" PRIu64 " %" PRIu64 " %" PRIu32,
           (uint32_t)d.nr, (uint64_t)d.args[0], (uint64_t)d.args[1],
           (uint64_t)d.args[2], (uint64_t)d.args[3], (uint64_t)d.args[4],
           (uint64_t)d.args[5], expected_ret);
  dump_record("CHECK", line, body);
}

int main(void) {
  for (int i = 0; i < runner_tests_count; ++i) {
    current = &runner_tests[i];
    current->func();
  }
  return 0;
}
