/* A static program run inside the test containers (oci_runtime_test.cc): it
 * makes one raw system call and prints what came back, so the test can read
 * the errno a filter answered, or see the container die of SIGSYS.
 *
 *   oci_probe native NR [ARG...]   syscall(NR, ARG...) on the native ABI
 *   oci_probe x32 NR               the x32 ABI: NR | __X32_SYSCALL_BIT
 *   oci_probe int80 NR [ARG...]    the i386 ABI through `int $0x80`
 *   oci_probe thread-int80 NR      int80 from a second thread; the first
 *                                  then reports whether it survived
 *
 * Prints "ret=R errno=E" (errno 0 on success) and exits 0.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long Arg(int argc, char** argv, int i) {
  return i < argc ? (long)strtoull(argv[i], NULL, 0) : 0;
}

static void Report(long ret) {
  if (ret < 0 && ret > -4096) {
    printf("ret=-1 errno=%ld\n", -ret);
  } else {
    printf("ret=%ld errno=0\n", ret);
  }
  fflush(stdout);
}

static long Native(long nr, long a0, long a1, long a2) {
  long r = syscall(nr, a0, a1, a2, 0L, 0L, 0L);
  return r == -1 ? -(long)errno : r;
}

#if defined(__x86_64__)
static long Int80(long nr, long a0, long a1, long a2) {
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a0), "c"(a1), "d"(a2) : "memory");
  return ret;
}
#else
static long Int80(long nr, long a0, long a1, long a2) {
  (void)nr, (void)a0, (void)a1, (void)a2;
  return -ENOSYS;
}
#endif

static long thread_nr;

static void* Int80Thread(void* unused) {
  (void)unused;
  Report(Int80(thread_nr, 0, 0, 0));
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: oci_probe native|x32|int80|thread-int80 NR [ARG...]\n");
    return 2;
  }
  const char* mode = argv[1];
  long nr = Arg(argc, argv, 2);
  if (strcmp(mode, "native") == 0) {
    Report(Native(nr, Arg(argc, argv, 3), Arg(argc, argv, 4), Arg(argc, argv, 5)));
  } else if (strcmp(mode, "x32") == 0) {
    Report(Native(nr | 0x40000000L, 0, 0, 0));
  } else if (strcmp(mode, "int80") == 0) {
    Report(Int80(nr, Arg(argc, argv, 3), Arg(argc, argv, 4), Arg(argc, argv, 5)));
  } else if (strcmp(mode, "thread-int80") == 0) {
    pthread_t t;
    thread_nr = nr;
    if (pthread_create(&t, NULL, Int80Thread, NULL) != 0) return 3;
    sleep(1); /* a thread killed by SIGSYS is never joined */
    printf("main survived\n");
    fflush(stdout);
  } else {
    return 2;
  }
  return 0;
}
