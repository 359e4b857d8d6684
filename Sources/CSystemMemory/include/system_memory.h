#ifndef MOCKCHAT_SYSTEM_MEMORY_H
#define MOCKCHAT_SYSTEM_MEMORY_H

/// Hands memory the C allocator keeps for reuse back to the operating system
/// (glibc's malloc_trim); does nothing where the allocator has no such call.
void mockchat_return_freed_memory(void);

#endif
