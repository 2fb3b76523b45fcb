/* Linked into the image's gpuenv (the portable preset, built on Debian 12)
 * so that it runs on the PyTorch image's Ubuntu 22.04, whose glibc is 2.35.
 *
 * The static libstdc++ of GCC 12 on Debian calls arc4random, new in glibc
 * 2.36, from std::random_device (pulled in by its COW-string instances), and
 * Debian's static libevent (gpuenv export's HTTP server) calls arc4random_buf
 * (evutil_rand.o, which its DNS code pulls in). A definition in the link
 * itself wins over libc.so's, so the binary asks for no GLIBC_2.36 symbol;
 * `setup-image.sh check-glibc` verifies that. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>

uint32_t arc4random(void) {
  uint32_t value = 0;
  while (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value && errno == EINTR) {
  }
  return value;
}

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
