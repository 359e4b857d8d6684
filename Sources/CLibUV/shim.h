#ifndef MOCKCHAT_CLIBUV_SHIM_H
#define MOCKCHAT_CLIBUV_SHIM_H
#include <uv.h>
/* hiredis's libuv adapter lives in this module too: uv.h must belong to one module
   only, or its constants go missing from the other's importers. */
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libuv.h>

/// The libuv adapter's attach function is `static` in its header; this wrapper gives
/// Swift one name to call.
static inline int mockchat_redis_attach(redisAsyncContext *context, uv_loop_t *loop) {
    return redisLibuvAttach(context, loop);
}
#endif
