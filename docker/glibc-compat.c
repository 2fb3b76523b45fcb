/* Linked into the image's gpuenv (the portable preset, built on Debian 12)
 * so that it runs on the PyTorch image's Ubuntu 22.04, whose glibc is 2.35.
 *
 * The static libstdc++ of GCC 12 on Debian calls arc4random, new in glibc
 * 2.36, from std::random_device (pulled in by its COW-string instances). A
 * definition in the link itself wins over libc.so's, so the binary asks for
 * no GLIBC_2.36 symbol; `setup-image.sh check-glibc` verifies that. */
#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

uint32_t arc4random(void) {
  uint32_t value = 0;
  while (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value && errno == EINTR) {
  }
  return value;
}
