#include "system_memory.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void mockchat_return_freed_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
