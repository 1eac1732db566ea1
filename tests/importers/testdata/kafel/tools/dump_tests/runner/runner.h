/* Stub of kafel's test/runner/runner.h used only to dump the policy strings
 * of kafel's test/basic.c, test/broken.c and test/includes.c. The TEST_CASE
 * macro keeps kafel's shape (constructor registration). */
#ifndef WARD_KAFEL_DUMP_RUNNER_H_
#define WARD_KAFEL_DUMP_RUNNER_H_

void test_fail_with_message(const char* format, ...);
void test_failed(int line, const char* file);

typedef struct {
  const char* name;
  const char* file;
  void (*func)(void);
} test_case_def_t;

extern test_case_def_t runner_tests[];
extern int runner_tests_count;

#define TEST_CASE(test_case_name)                                               \
  static void test_##test_case_name(void);                                      \
  __attribute((constructor)) static void register_test_##test_case_name(void) { \
    test_case_def_t* test_case = &runner_tests[runner_tests_count];             \
    test_case->name = #test_case_name;                                          \
    test_case->file = __FILE__;                                                 \
    test_case->func = test_##test_case_name;                                    \
    runner_tests_count++;                                                       \
  }                                                                             \
  static void test_##test_case_name(void)

#endif
