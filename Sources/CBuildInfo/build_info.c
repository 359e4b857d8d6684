#include "build_info.h"

// Package.swift defines MOCKCHAT_COMMIT for this file only, so a new commit recompiles
// this one file and relinks; no Swift module sees the define.
#ifndef MOCKCHAT_COMMIT
#define MOCKCHAT_COMMIT "unknown"
#endif

const char *mockchat_build_commit(void) {
    return MOCKCHAT_COMMIT;
}
