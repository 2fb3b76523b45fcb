/* src/portable/glibc_compat.c against the glibc it runs on: linked as the
 * portable binary is (the compat object, its --wrap flags), run by
 * tests/portable/run.sh on this machine and in the old-glibc root
 * filesystem. Where the running glibc has a function itself (looked up in
 * libc.so.6, past this program's own definition), the answers must agree.
 * Exit 0: all agree; 1: a mismatch, printed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

uint32_t arc4random(void);
void arc4random_buf(void*, size_t);
const char* sigabbrev_np(int);

static int failures = 0;
#define CHECK(cond, ...) \
  do {                   \
    if (!(cond)) {       \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n");      \
      ++failures;        \
    }                    \
  } while (0)

static void* libc_own(const char* name) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return libc ? dlsym(libc, name) : NULL;
}

static void signals(void) {
  CHECK(strcmp(sigabbrev_np(SIGTERM), "TERM") == 0, "sigabbrev_np(SIGTERM)");
  CHECK(sigabbrev_np(0) == NULL && sigabbrev_np(200) == NULL, "sigabbrev_np out of range");
  const char* (*real)(int) = (const char* (*)(int))libc_own("sigabbrev_np");
  if (!real) return;
  for (int s = 1; s < 32; ++s)
    CHECK(real(s) && sigabbrev_np(s) && strcmp(real(s), sigabbrev_np(s)) == 0, "sigabbrev_np(%d): %s, glibc %s",
          s, sigabbrev_np(s), real(s));
}

static void randomness(void) {
  uint32_t b[4] = {0, 0, 0, 0};
  arc4random_buf(b, sizeof b);
  CHECK(b[0] != b[1] || b[2] != b[3], "arc4random_buf left zeros");
  CHECK(arc4random() != arc4random() || arc4random() != arc4random(), "arc4random repeats");
}

static long long ms_since(const struct timespec* t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1000LL + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void clockwait(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  struct timespec t0, deadline;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  deadline = t0;
  deadline.tv_nsec += 150 * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) deadline.tv_sec += 1, deadline.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&m);
  int rc;
  do rc = pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &deadline);
  while (rc == 0);
  pthread_mutex_unlock(&m);
  long long ms = ms_since(&t0);
  CHECK(rc == 110 /* ETIMEDOUT */ && ms >= 140 && ms < 2000, "pthread_cond_clockwait: rc %d after %lld ms", rc, ms);
  CHECK(pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &deadline) == 22, "clockwait EINVAL");
}

static void find_object(void) {
  int (*real)(void*, struct dl_find_object*) = (int (*)(void*, struct dl_find_object*))libc_own("_dl_find_object");
  void* pcs[] = {(void*)find_object, (void*)dlsym(RTLD_DEFAULT, "printf")};
  for (int i = 0; i < 2; ++i) {
    struct dl_find_object ours, theirs;
    CHECK(_dl_find_object(pcs[i], &ours) == 0 && ours.dlfo_eh_frame != NULL, "_dl_find_object(pc %d)", i);
    if (real && real(pcs[i], &theirs) == 0)
      CHECK(ours.dlfo_map_start == theirs.dlfo_map_start && ours.dlfo_eh_frame == theirs.dlfo_eh_frame,
            "_dl_find_object(pc %d): %p/%p, glibc %p/%p", i, ours.dlfo_map_start, ours.dlfo_eh_frame,
            theirs.dlfo_map_start, theirs.dlfo_eh_frame);
  }
  struct dl_find_object none;
  CHECK(_dl_find_object((void*)8, &none) == -1, "_dl_find_object(8) found something");
}

static void stats(void) {
  struct stat a, b, l;
  CHECK(stat("/proc/self/exe", &a) == 0 && lstat("/proc/self/exe", &l) == 0, "stat/lstat /proc/self/exe");
  CHECK(S_ISREG(a.st_mode) && S_ISLNK(l.st_mode), "stat follows, lstat does not");
  CHECK(fstatat(AT_FDCWD, "/", &b, 0) == 0 && S_ISDIR(b.st_mode), "fstatat /");
  CHECK(fstat(1, &b) == 0, "fstat(1)");
  CHECK(stat("/nonexistent", &a) == -1, "stat of a missing file");
}

static int constructed = 0;
__attribute__((constructor)) static void mark(void) { constructed = 1; }

static int token;
static void* thread_main(void* arg) { return arg; }

/* gRPC's: a thread with its own stack size and name, and log2. */
static void grpc_calls(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  CHECK(pthread_attr_setstacksize(&attr, 1 << 20) == 0, "pthread_attr_setstacksize");
  pthread_t t;
  void* out = NULL;
  CHECK(pthread_create(&t, &attr, thread_main, &token) == 0 && pthread_join(t, &out) == 0, "thread with attr");
  pthread_attr_destroy(&attr);
  char name[16] = "";
  CHECK(pthread_setname_np(pthread_self(), "compat-test") == 0, "pthread_setname_np");
  prctl(PR_GET_NAME, name);
  CHECK(strcmp(name, "compat-test") == 0, "thread name \"%s\"", name);
  volatile double eight = 8;
  CHECK(log2(eight) == 3, "log2(8) = %g", log2(eight));
}

int main(void) {
  CHECK(constructed, "constructors did not run");
  pthread_t t;
  void* out = NULL;
  CHECK(pthread_create(&t, NULL, thread_main, &token) == 0 && pthread_join(t, &out) == 0 && out == &token, "threads");
  signals();
  randomness();
  clockwait();
  find_object();
  stats();
  grpc_calls();
  printf("glibc_compat_test: %s (%d failures)\n", failures ? "FAIL" : "ok", failures);
  return failures ? 1 : 0;
}
