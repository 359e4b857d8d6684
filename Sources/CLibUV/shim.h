#ifndef MOCKCHAT_CLIBUV_SHIM_H
#define MOCKCHAT_CLIBUV_SHIM_H
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
/* hiredis lives in this module too: uv.h must belong to one module only, or its
   constants go missing from the other's importers. */
#include <hiredis/hiredis.h>
#include <hiredis/async.h>

/* hiredis's libuv glue, written here rather than taken from hiredis/adapters/libuv.h:
   the adapter of hiredis 0.14 returns from its poll callback when libuv reports an
   error, and libuv reports a refused connect(2) as one (POLLERR, then UV_EBADF with the
   poll stopped). The connection then never learns that it failed, and a node whose
   Redis was down at its first retry never tried again. Here an error is handed to
   hiredis as readiness for what was awaited, as hiredis 1.x does: hiredis then reads
   the socket's error and reports it through the connect or disconnect callback. */
typedef struct mockchat_redis_events {
    redisAsyncContext *context;
    uv_poll_t handle;
    int events;
} mockchat_redis_events;

/* The handle's `data` is its Swift owner (the RedisConnection), as for every handle of
   the loop, so that EventLoop.shutdown() can close it; the struct is found from the
   handle's address instead. */
static inline mockchat_redis_events *mockchat_redis_of(uv_handle_t *handle) {
    return (mockchat_redis_events *)((char *)handle - offsetof(mockchat_redis_events, handle));
}

static inline void mockchat_redis_poll(uv_poll_t *handle, int status, int events) {
    mockchat_redis_events *p = mockchat_redis_of((uv_handle_t *)handle);
    int ready = status != 0 ? p->events : events;
    if (p->context != NULL && (ready & UV_READABLE)) redisAsyncHandleRead(p->context);
    if (p->context != NULL && (ready & UV_WRITABLE)) redisAsyncHandleWrite(p->context);
}

static inline void mockchat_redis_watch(mockchat_redis_events *p, int add, int remove) {
    p->events = (p->events | add) & ~remove;
    if (p->events) uv_poll_start(&p->handle, p->events, mockchat_redis_poll);
    else uv_poll_stop(&p->handle);
}

static inline void mockchat_redis_add_read(void *data) { mockchat_redis_watch(data, UV_READABLE, 0); }
static inline void mockchat_redis_del_read(void *data) { mockchat_redis_watch(data, 0, UV_READABLE); }
static inline void mockchat_redis_add_write(void *data) { mockchat_redis_watch(data, UV_WRITABLE, 0); }
static inline void mockchat_redis_del_write(void *data) { mockchat_redis_watch(data, 0, UV_WRITABLE); }

static inline void mockchat_redis_closed(uv_handle_t *handle) { free(mockchat_redis_of(handle)); }

static inline void mockchat_redis_cleanup(void *data) {
    mockchat_redis_events *p = (mockchat_redis_events *)data;
    p->context = NULL; /* the context may be gone by the time the close completes */
    uv_close((uv_handle_t *)&p->handle, mockchat_redis_closed);
}

/// Drives `context` from `loop`, with `owner` as the handle's `data`; REDIS_ERR if it
/// cannot (already attached, no memory).
static inline int mockchat_redis_attach(redisAsyncContext *context, uv_loop_t *loop, void *owner) {
    if (context->ev.data != NULL) return REDIS_ERR;
    mockchat_redis_events *p = (mockchat_redis_events *)calloc(1, sizeof(*p));
    if (p == NULL) return REDIS_ERR;
    if (uv_poll_init(loop, &p->handle, context->c.fd) != 0) {
        free(p);
        return REDIS_ERR;
    }
    context->ev.addRead = mockchat_redis_add_read;
    context->ev.delRead = mockchat_redis_del_read;
    context->ev.addWrite = mockchat_redis_add_write;
    context->ev.delWrite = mockchat_redis_del_write;
    context->ev.cleanup = mockchat_redis_cleanup;
    context->ev.data = p;
    p->handle.data = owner;
    p->context = context;
    return REDIS_OK;
}
#endif
