/* What lets the portable gpuenv (cmake --preset portable, and the test
 * build's gpuenv-portable), linked on Debian 12 (glibc 2.36), run on glibc
 * 2.28 and later (RHEL 8, Ubuntu 20.04). docs/portable.md explains it.
 *
 * Linking against glibc 2.36 gives every call the newest version of its
 * symbol; `objdump -T` then lists 37 that glibc 2.28 lacks, from gpuenv and
 * from the static libstdc++, libgcc, SQLite, hwloc and libevent. Two cures:
 *
 *  - __wrap_NAME: the symbol exists in 2.28 under an older version (stat,
 *    dlopen, pthread_create, exp, __libc_start_main, ...). The link passes
 *    -Wl,--wrap=NAME for every __wrap_ defined here (CMakeLists.txt reads
 *    them from this file), so every object's call lands here, and this calls
 *    the old version, which newer glibc still exports for old binaries.
 *  - a plain definition: the function is newer than 2.28 (arc4random,
 *    sigabbrev_np, pthread_cond_clockwait, _dl_find_object). A definition in
 *    the link wins over libc.so's, so nothing is imported.
 * hwloc's udev calls are answered here too (udev_new returns NULL, hwloc's
 * "no udev" path: udev only names block devices' model and serial), so the
 * binary needs no libudev.so.1 from the host.
 *
 * tests/portable/run.sh (ctest portable.glibc) checks the ceiling and runs
 * the binary in a Debian 11 root filesystem; glibc_compat_test.c checks
 * each function here against the host's glibc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#define OLD(name, alias, version) __asm__(".symver " #alias "," #name "@" version)

/* ---- symbols glibc 2.28 has under an older version ---- */

#ifndef GPUENV_COMPAT_SHARED_OBJECT /* the bench plugin has no entry point */
/* The program's entry: crt1.o calls it. glibc 2.34's crt1.o passes no init
 * function, since 2.34's libc runs the program's constructors itself; the
 * old version runs only the init function it is given (libc_nonshared's
 * __libc_csu_init until 2.33), so this one is it: the same loops. */
typedef void (*init_fn)(int, char**, char**);
extern init_fn __preinit_array_start[] __attribute__((visibility("hidden")));
extern init_fn __preinit_array_end[] __attribute__((visibility("hidden")));
extern init_fn __init_array_start[] __attribute__((visibility("hidden")));
extern init_fn __init_array_end[] __attribute__((visibility("hidden")));
extern void _init(void);

static void run_constructors(int argc, char** argv, char** envp) {
  for (init_fn* f = __preinit_array_start; f < __preinit_array_end; ++f) (*f)(argc, argv, envp);
  _init();
  for (init_fn* f = __init_array_start; f < __init_array_end; ++f) (*f)(argc, argv, envp);
}

int old_libc_start_main(int (*main)(int, char**, char**), int argc, char** argv, init_fn init,
                        void (*fini)(void), void (*rtld_fini)(void), void* stack_end);
OLD(__libc_start_main, old_libc_start_main, "GLIBC_2.2.5");
int __wrap___libc_start_main(int (*main)(int, char**, char**), int argc, char** argv, init_fn init,
                             void (*fini)(void), void (*rtld_fini)(void), void* stack_end) {
  return old_libc_start_main(main, argc, argv, init ? init : run_constructors, fini, rtld_fini, stack_end);
}
#endif

/* libm: 2.29 only dropped the SVID error handling (matherr). */
double old_exp(double), old_log(double), old_log2(double), old_pow(double, double);
OLD(exp, old_exp, "GLIBC_2.2.5");
OLD(log, old_log, "GLIBC_2.2.5");
OLD(log2, old_log2, "GLIBC_2.2.5"); /* gRPC's */
OLD(pow, old_pow, "GLIBC_2.2.5");
double __wrap_exp(double x) { return old_exp(x); }
double __wrap_log(double x) { return old_log(x); }
double __wrap_log2(double x) { return old_log2(x); }
double __wrap_pow(double x, double y) { return old_pow(x, y); }

/* The stat family became functions in 2.33; before, they were inline calls
 * of __xstat(_STAT_VER, ...), _STAT_VER being 1 on x86_64, where struct stat
 * and struct stat64 are the same. */
enum { kStatVer = 1 };
int old_xstat(int, const char*, struct stat*), old_lxstat(int, const char*, struct stat*);
int old_fxstat(int, int, struct stat*), old_fxstatat(int, int, const char*, struct stat*, int);
OLD(__xstat, old_xstat, "GLIBC_2.2.5");
OLD(__lxstat, old_lxstat, "GLIBC_2.2.5");
OLD(__fxstat, old_fxstat, "GLIBC_2.2.5");
OLD(__fxstatat, old_fxstatat, "GLIBC_2.4");
int __wrap_stat(const char* p, struct stat* b) { return old_xstat(kStatVer, p, b); }
int __wrap_stat64(const char* p, struct stat* b) { return old_xstat(kStatVer, p, b); }
int __wrap_lstat(const char* p, struct stat* b) { return old_lxstat(kStatVer, p, b); }
int __wrap_lstat64(const char* p, struct stat* b) { return old_lxstat(kStatVer, p, b); }
int __wrap_fstat(int fd, struct stat* b) { return old_fxstat(kStatVer, fd, b); }
int __wrap_fstat64(int fd, struct stat* b) { return old_fxstat(kStatVer, fd, b); }
int __wrap_fstatat(int dir, const char* p, struct stat* b, int flags) {
  return old_fxstatat(kStatVer, dir, p, b, flags);
}

/* libdl and libpthread moved into libc in 2.34 under new versions; the old
 * ones live in libdl.so.2 and libpthread.so.0 on 2.28 (both linked). */
void* old_dlopen(const char*, int);
void* old_dlsym(void*, const char*);
int old_dlclose(void*);
char* old_dlerror(void);
OLD(dlopen, old_dlopen, "GLIBC_2.2.5");
OLD(dlsym, old_dlsym, "GLIBC_2.2.5");
OLD(dlclose, old_dlclose, "GLIBC_2.2.5");
OLD(dlerror, old_dlerror, "GLIBC_2.2.5");
void* __wrap_dlopen(const char* f, int mode) { return old_dlopen(f, mode); }
void* __wrap_dlsym(void* h, const char* s) { return old_dlsym(h, s); }
int __wrap_dlclose(void* h) { return old_dlclose(h); }
char* __wrap_dlerror(void) { return old_dlerror(); }
int old_dladdr(const void*, Dl_info*); /* OpenSSL's (export's TLS) */
OLD(dladdr, old_dladdr, "GLIBC_2.2.5");
int __wrap_dladdr(const void* a, Dl_info* i) { return old_dladdr(a, i); }

int old_pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int old_pthread_detach(pthread_t), old_pthread_join(pthread_t, void**);
int old_pthread_key_create(pthread_key_t*, void (*)(void*)), old_pthread_key_delete(pthread_key_t);
void* old_pthread_getspecific(pthread_key_t);
int old_pthread_setspecific(pthread_key_t, const void*);
int old_pthread_mutexattr_init(pthread_mutexattr_t*), old_pthread_mutexattr_destroy(pthread_mutexattr_t*);
int old_pthread_mutexattr_settype(pthread_mutexattr_t*, int);
int old_pthread_mutex_trylock(pthread_mutex_t*);
int old_pthread_once(pthread_once_t*, void (*)(void));
int old_pthread_sigmask(int, const sigset_t*, sigset_t*);
int old_pthread_getaffinity_np(pthread_t, size_t, cpu_set_t*);
int old_pthread_attr_setstacksize(pthread_attr_t*, size_t);  /* gRPC's threads */
int old_pthread_setname_np(pthread_t, const char*);
int old_pthread_setaffinity_np(pthread_t, size_t, const cpu_set_t*);
OLD(pthread_create, old_pthread_create, "GLIBC_2.2.5");
OLD(pthread_detach, old_pthread_detach, "GLIBC_2.2.5");
OLD(pthread_join, old_pthread_join, "GLIBC_2.2.5");
OLD(pthread_key_create, old_pthread_key_create, "GLIBC_2.2.5");
OLD(pthread_key_delete, old_pthread_key_delete, "GLIBC_2.2.5");
OLD(pthread_getspecific, old_pthread_getspecific, "GLIBC_2.2.5");
OLD(pthread_setspecific, old_pthread_setspecific, "GLIBC_2.2.5");
OLD(pthread_mutexattr_init, old_pthread_mutexattr_init, "GLIBC_2.2.5");
OLD(pthread_mutexattr_destroy, old_pthread_mutexattr_destroy, "GLIBC_2.2.5");
OLD(pthread_mutexattr_settype, old_pthread_mutexattr_settype, "GLIBC_2.2.5");
OLD(pthread_mutex_trylock, old_pthread_mutex_trylock, "GLIBC_2.2.5");
OLD(pthread_once, old_pthread_once, "GLIBC_2.2.5");
OLD(pthread_sigmask, old_pthread_sigmask, "GLIBC_2.2.5");
OLD(pthread_getaffinity_np, old_pthread_getaffinity_np, "GLIBC_2.3.4");
OLD(pthread_attr_setstacksize, old_pthread_attr_setstacksize, "GLIBC_2.2.5");
OLD(pthread_setname_np, old_pthread_setname_np, "GLIBC_2.12");
OLD(pthread_setaffinity_np, old_pthread_setaffinity_np, "GLIBC_2.3.4");
int __wrap_pthread_create(pthread_t* t, const pthread_attr_t* a, void* (*f)(void*), void* arg) {
  return old_pthread_create(t, a, f, arg);
}
int __wrap_pthread_detach(pthread_t t) { return old_pthread_detach(t); }
int __wrap_pthread_join(pthread_t t, void** r) { return old_pthread_join(t, r); }
int __wrap_pthread_key_create(pthread_key_t* k, void (*d)(void*)) { return old_pthread_key_create(k, d); }
/* libstdc++ asks whether threads are linked in through this weak one. */
int __wrap___pthread_key_create(pthread_key_t* k, void (*d)(void*)) { return old_pthread_key_create(k, d); }
int __wrap_pthread_key_delete(pthread_key_t k) { return old_pthread_key_delete(k); }
void* __wrap_pthread_getspecific(pthread_key_t k) { return old_pthread_getspecific(k); }
int __wrap_pthread_setspecific(pthread_key_t k, const void* v) { return old_pthread_setspecific(k, v); }
int __wrap_pthread_mutexattr_init(pthread_mutexattr_t* a) { return old_pthread_mutexattr_init(a); }
int __wrap_pthread_mutexattr_destroy(pthread_mutexattr_t* a) { return old_pthread_mutexattr_destroy(a); }
int __wrap_pthread_mutexattr_settype(pthread_mutexattr_t* a, int t) {
  return old_pthread_mutexattr_settype(a, t);
}
int __wrap_pthread_mutex_trylock(pthread_mutex_t* m) { return old_pthread_mutex_trylock(m); }
int __wrap_pthread_once(pthread_once_t* o, void (*f)(void)) { return old_pthread_once(o, f); }
int __wrap_pthread_sigmask(int how, const sigset_t* s, sigset_t* old) { return old_pthread_sigmask(how, s, old); }
int __wrap_pthread_attr_setstacksize(pthread_attr_t* a, size_t n) { return old_pthread_attr_setstacksize(a, n); }
int __wrap_pthread_setname_np(pthread_t t, const char* name) { return old_pthread_setname_np(t, name); }
int __wrap_pthread_getaffinity_np(pthread_t t, size_t n, cpu_set_t* s) {
  return old_pthread_getaffinity_np(t, n, s);
}
int __wrap_pthread_setaffinity_np(pthread_t t, size_t n, const cpu_set_t* s) {
  return old_pthread_setaffinity_np(t, n, s);
}
/* OpenSSL's locks (export's TLS). */
int old_pthread_rwlock_init(pthread_rwlock_t*, const pthread_rwlockattr_t*);
int old_pthread_rwlock_destroy(pthread_rwlock_t*), old_pthread_rwlock_rdlock(pthread_rwlock_t*);
int old_pthread_rwlock_wrlock(pthread_rwlock_t*), old_pthread_rwlock_unlock(pthread_rwlock_t*);
OLD(pthread_rwlock_init, old_pthread_rwlock_init, "GLIBC_2.2.5");
OLD(pthread_rwlock_destroy, old_pthread_rwlock_destroy, "GLIBC_2.2.5");
OLD(pthread_rwlock_rdlock, old_pthread_rwlock_rdlock, "GLIBC_2.2.5");
OLD(pthread_rwlock_wrlock, old_pthread_rwlock_wrlock, "GLIBC_2.2.5");
OLD(pthread_rwlock_unlock, old_pthread_rwlock_unlock, "GLIBC_2.2.5");
int __wrap_pthread_rwlock_init(pthread_rwlock_t* l, const pthread_rwlockattr_t* a) {
  return old_pthread_rwlock_init(l, a);
}
int __wrap_pthread_rwlock_destroy(pthread_rwlock_t* l) { return old_pthread_rwlock_destroy(l); }
int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t* l) { return old_pthread_rwlock_rdlock(l); }
int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t* l) { return old_pthread_rwlock_wrlock(l); }
int __wrap_pthread_rwlock_unlock(pthread_rwlock_t* l) { return old_pthread_rwlock_unlock(l); }

/* ---- symbols newer than glibc 2.28: defined here ---- */

/* 2.32. libstdc++ skips atomic reference counts while it is true; false
 * always takes the atomic path, which is correct, only not the shortcut. */
char __libc_single_threaded = 0;

/* 2.36: std::random_device (libstdc++) and libevent's evutil_secure_rng. */
void arc4random_buf(void* buf, size_t n) {
  unsigned char* p = buf;
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return; /* getrandom(2) with flags 0 fails only on a kernel before 3.17 */
    }
    p += got;
    n -= (size_t)got;
  }
}

uint32_t arc4random(void) {
  uint32_t value = 0;
  arc4random_buf(&value, sizeof value);
  return value;
}

/* 2.32: gpuenv names signals with it (act/supervise.cc). */
const char* sigabbrev_np(int sig) {
  static const char* const kNames[] = {
      [SIGHUP] = "HUP",     [SIGINT] = "INT",       [SIGQUIT] = "QUIT", [SIGILL] = "ILL",
      [SIGTRAP] = "TRAP",   [SIGABRT] = "ABRT",     [SIGBUS] = "BUS",   [SIGFPE] = "FPE",
      [SIGKILL] = "KILL",   [SIGUSR1] = "USR1",     [SIGSEGV] = "SEGV", [SIGUSR2] = "USR2",
      [SIGPIPE] = "PIPE",   [SIGALRM] = "ALRM",     [SIGTERM] = "TERM", [SIGSTKFLT] = "STKFLT",
      [SIGCHLD] = "CHLD",   [SIGCONT] = "CONT",     [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP",
      [SIGTTIN] = "TTIN",   [SIGTTOU] = "TTOU",     [SIGURG] = "URG",   [SIGXCPU] = "XCPU",
      [SIGXFSZ] = "XFSZ",   [SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH",
      [SIGIO] = "POLL",       [SIGPWR] = "PWR",       [SIGSYS] = "SYS",
  };
  if (sig <= 0 || sig >= (int)(sizeof kNames / sizeof kNames[0])) return NULL;
  return kNames[sig];
}

/* 2.30 (2.34's version): std::condition_variable's steady-clock waits. A
 * monotonic deadline becomes a realtime one, as libstdc++ did before glibc
 * had this call; the wait may end early or late by a jump of the wall clock
 * during it, which the callers' loops absorb. */
int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                           const struct timespec* deadline) {
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(c, m, deadline);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  struct timespec mono, real;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  long long ns = (deadline->tv_sec - mono.tv_sec) * 1000000000LL + (deadline->tv_nsec - mono.tv_nsec);
  if (ns < 0) ns = 0;
  long long at = real.tv_nsec + ns % 1000000000LL;
  struct timespec until = {real.tv_sec + ns / 1000000000LL + at / 1000000000LL, at % 1000000000LL};
  return pthread_cond_timedwait(c, m, &until);
}

/* 2.35: the static libgcc's unwinder finds a PC's .eh_frame_hdr with it,
 * and has no fallback when it fails, so every C++ exception depends on it.
 * The same answer from dl_iterate_phdr, which older libgcc used. */
struct find_object {
  uintptr_t pc;
  struct dl_find_object* out;
};

static int find_object_in(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct find_object* f = data;
  uintptr_t lo = UINTPTR_MAX, hi = 0, eh = 0;
  int hit = 0;
  for (size_t i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* p = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_GNU_EH_FRAME) eh = start;
    if (p->p_type != PT_LOAD) continue;
    if (start < lo) lo = start;
    if (start + p->p_memsz > hi) hi = start + p->p_memsz;
    if (f->pc >= start && f->pc < start + p->p_memsz) hit = 1;
  }
  if (!hit) return 0;
  memset(f->out, 0, sizeof *f->out);
  f->out->dlfo_map_start = (void*)lo;
  f->out->dlfo_map_end = (void*)hi;
  f->out->dlfo_eh_frame = (void*)eh;
  return 1;
}

int _dl_find_object(void* pc, struct dl_find_object* out) {
  struct find_object f = {(uintptr_t)pc, out};
  return dl_iterate_phdr(find_object_in, &f) ? 0 : -1;
}

/* ---- libudev, for the static hwloc ---- */
struct udev;
struct udev_device;
struct udev* udev_new(void) { return NULL; }
struct udev* udev_unref(struct udev* u) { (void)u; return NULL; }
struct udev_device* udev_device_new_from_subsystem_sysname(struct udev* u, const char* s, const char* n) {
  (void)u, (void)s, (void)n;
  return NULL;
}
const char* udev_device_get_property_value(struct udev_device* d, const char* key) {
  (void)d, (void)key;
  return NULL;
}
struct udev_device* udev_device_unref(struct udev_device* d) { (void)d; return NULL; }
