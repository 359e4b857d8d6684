#include "system_memory.h"
// Any C library header defines __GLIBC__ under glibc (through <features.h>); the
// compiler does not. Without it first, the test below was always false and the trim
// never compiled in.
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void mockchat_return_freed_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
