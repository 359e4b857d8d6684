#ifndef MOCKCHAT_CLIBUV_SHIM_H
#define MOCKCHAT_CLIBUV_SHIM_H
#include <uv.h>
#endif
