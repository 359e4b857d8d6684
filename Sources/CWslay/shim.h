#ifndef MOCKCHAT_CWSLAY_SHIM_H
#define MOCKCHAT_CWSLAY_SHIM_H
#include <sys/types.h>
#include <wslay/wslay.h>
#endif
