#ifndef MOCKCHAT_SYSTEM_PROCESS_H
#define MOCKCHAT_SYSTEM_PROCESS_H

#include <spawn.h>

/// Creates a pipe whose two ends are close-on-exec from the start (pipe2 with
/// O_CLOEXEC), so a process started by another thread never inherits them.
/// Returns 0, or -1 with errno set.
int mockchat_cloexec_pipe(int fds[2]);

/// Makes the spawned process close every descriptor from `lowest` up
/// (glibc's posix_spawn_file_actions_addclosefrom_np). Returns 0 or an error number.
int mockchat_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
