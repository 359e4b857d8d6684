#ifndef MOCKCHAT_CLIBUV_SHIM_H
#define MOCKCHAT_CLIBUV_SHIM_H
#include <uv.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#endif
