/*
 * The ceiling for MockChat's stack: a minimal WebSocket server on libuv + wslay.
 *
 * It does the HTTP upgrade, then answers the subset of the protocol that
 * `mockchat bench` uses, with no directory, no validation, no trace:
 *   - `login`  -> {"id":ID,"result":{"connectionId":"cN","serverTime":T}}; the user goes
 *                 online (a `user.online` event to every logged-in subscriber but its own
 *                 connections) unless the login asked for {"mode":"none"}.
 *   - `ping`   -> {"id":ID,"result":{"pong":true,"serverTime":T}}
 *   - `logout` -> {"id":ID,"result":{}}, `user.offline` if that was the user's last
 *                 connection, then close 1000.
 *   - anything else with an id -> {"id":ID,"result":{}}
 * Events are encoded once and the same bytes are appended to every subscriber's
 * output buffer; each connection's buffer is written with one uv_write per loop
 * turn, so several frames share a write. wslay parses input and handles control
 * frames (ping, close); data frames are framed directly (server frames are unmasked).
 *
 * Build: gcc -O2 -o ceiling ceiling.c -luv -lwslay -lcrypto
 * Run:   ceiling [PORT [HOST]]   (port 0 picks a free one; the first stdout line
 *        says "ceiling listening on ws://HOST:PORT/v1/ws")
 */
#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <uv.h>
#include <wslay/wslay.h>

#define HEAD_LIMIT 8192
#define MAX_USERS 65536

typedef struct conn conn_t;

struct conn {
    uv_tcp_t tcp;
    wslay_event_context_ptr ws;       /* NULL until upgraded */
    char *head;                       /* HTTP request head, freed after the upgrade */
    size_t head_len;
    const uint8_t *in;                /* bytes being offered to wslay */
    size_t in_len;
    uint8_t *out;                     /* frames waiting for the next write */
    size_t out_len, out_cap;
    int dirty;                        /* on the pending-flush list */
    conn_t *next_dirty;
    int user;                         /* index into users[], -1 before login */
    int subscribed;
    conn_t *prev_sub, *next_sub;      /* list of logged-in subscribers */
    unsigned long id;
    int closing;
};

typedef struct {
    char *uid;
    int online;                       /* logged-in connections */
} user_t;

typedef struct {
    uv_write_t req;
    uv_buf_t buf;
} write_req_t;

static uv_loop_t *loop;
static uv_check_t flusher_check;
static uv_prepare_t flusher_prepare;
static conn_t *dirty_head;
static conn_t *subscribers;
static user_t users[MAX_USERS];
static int user_count;
static unsigned long next_conn_id = 1;
static char read_buffer[65536];

static double now_seconds(void) {
    uv_timeval64_t tv;
    uv_gettimeofday(&tv);
    return (double)tv.tv_sec + (double)(tv.tv_usec / 1000) / 1000.0;
}

/* ---- output ---- */

static void reserve(conn_t *c, size_t extra) {
    if (c->out_len + extra <= c->out_cap) return;
    size_t cap = c->out_cap ? c->out_cap : 512;
    while (cap < c->out_len + extra) cap *= 2;
    c->out = realloc(c->out, cap);
    c->out_cap = cap;
}

static void mark_dirty(conn_t *c) {
    if (c->dirty) return;
    c->dirty = 1;
    c->next_dirty = dirty_head;
    dirty_head = c;
}

static void append_raw(conn_t *c, const void *bytes, size_t len) {
    reserve(c, len);
    memcpy(c->out + c->out_len, bytes, len);
    c->out_len += len;
    mark_dirty(c);
}

/* Appends one unmasked text frame. */
static void append_text(conn_t *c, const char *payload, size_t len) {
    if (c->closing || !c->ws || wslay_event_get_close_sent(c->ws)) return;
    uint8_t header[10];
    size_t n = 0;
    header[n++] = 0x81;
    if (len < 126) {
        header[n++] = (uint8_t)len;
    } else if (len < 65536) {
        header[n++] = 126;
        header[n++] = (uint8_t)(len >> 8);
        header[n++] = (uint8_t)len;
    } else {
        header[n++] = 127;
        for (int i = 7; i >= 0; i--) header[n++] = (uint8_t)((uint64_t)len >> (8 * i));
    }
    reserve(c, n + len);
    memcpy(c->out + c->out_len, header, n);
    memcpy(c->out + c->out_len + n, payload, len);
    c->out_len += n + len;
    mark_dirty(c);
}

static void on_written(uv_write_t *req, int status) {
    (void)status;
    write_req_t *w = (write_req_t *)req;
    free(w->buf.base);
    free(w);
}

static void on_closed(uv_handle_t *handle);

static void on_shutdown(uv_shutdown_t *req, int status) {
    (void)status;
    uv_close((uv_handle_t *)req->handle, on_closed);
    free(req);
}

static void flush_one(conn_t *c) {
    c->dirty = 0;
    if (c->closing) return;
    if (c->out_len > 0) {
        /* Offer the bytes to the kernel first; queue only what it does not take. */
        uv_buf_t all = uv_buf_init((char *)c->out, (unsigned)c->out_len);
        int sent = uv_try_write((uv_stream_t *)&c->tcp, &all, 1);
        if (sent < 0) sent = 0;
        if ((size_t)sent < c->out_len) {
            write_req_t *w = malloc(sizeof *w);
            size_t rest = c->out_len - (size_t)sent;
            w->buf = uv_buf_init(malloc(rest), (unsigned)rest);
            memcpy(w->buf.base, c->out + sent, rest);
            if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &w->buf, 1, on_written) != 0) {
                free(w->buf.base);
                free(w);
            }
        }
        c->out_len = 0;
    }
    if (c->ws && !wslay_event_want_read(c->ws) && !wslay_event_want_write(c->ws)) {
        /* The closing handshake is over: end the stream once the last write is out. */
        c->closing = 1;
        uv_shutdown_t *req = malloc(sizeof *req);
        if (uv_shutdown(req, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
            free(req);
            uv_close((uv_handle_t *)&c->tcp, on_closed);
        }
    }
}

static void flush_all(void) {
    while (dirty_head) {
        conn_t *c = dirty_head;
        dirty_head = c->next_dirty;
        flush_one(c);
    }
}

static void on_check(uv_check_t *h) { (void)h; flush_all(); }
static void on_prepare(uv_prepare_t *h) { (void)h; flush_all(); }

/* ---- presence ---- */

static int find_user(const char *uid, size_t len) {
    for (int i = 0; i < user_count; i++)
        if (strlen(users[i].uid) == len && memcmp(users[i].uid, uid, len) == 0) return i;
    if (user_count == MAX_USERS) return -1;
    users[user_count].uid = strndup(uid, len);
    users[user_count].online = 0;
    return user_count++;
}

static void broadcast(int user, int online) {
    char frame[512];
    int len = snprintf(frame, sizeof frame,
        "{\"event\":\"user.%s\",\"user\":{\"uid\":\"%s\",\"name\":null,\"avatar\":null,\"link\":null,"
        "\"role\":null,\"status\":\"%s\",\"statusMessage\":null,\"lastActiveAt\":%.3f,"
        "\"hasBlockedMe\":false,\"blockedByMe\":false,\"deactivatedAt\":0.0,\"tags\":[],\"metadata\":{}}}",
        online ? "online" : "offline", users[user].uid, online ? "online" : "offline", now_seconds());
    if (len <= 0 || len >= (int)sizeof frame) return;
    for (conn_t *s = subscribers; s; s = s->next_sub)
        if (s->user != user) append_text(s, frame, (size_t)len);
}

static void subscribe(conn_t *c) {
    c->subscribed = 1;
    c->prev_sub = NULL;
    c->next_sub = subscribers;
    if (subscribers) subscribers->prev_sub = c;
    subscribers = c;
}

static void forget(conn_t *c) {
    if (c->subscribed) {
        if (c->prev_sub) c->prev_sub->next_sub = c->next_sub; else subscribers = c->next_sub;
        if (c->next_sub) c->next_sub->prev_sub = c->prev_sub;
        c->subscribed = 0;
    }
    if (c->user >= 0) {
        int user = c->user;
        c->user = -1;
        if (--users[user].online == 0) broadcast(user, 0);
    }
}

/* ---- requests ---- */

/* Finds `"key":` and returns a pointer to the value, or NULL. */
static const char *find_value(const char *text, size_t len, const char *key) {
    size_t klen = strlen(key);
    for (size_t i = 0; i + klen + 3 <= len; i++) {
        if (text[i] == '"' && memcmp(text + i + 1, key, klen) == 0 && text[i + 1 + klen] == '"') {
            size_t j = i + klen + 2;
            while (j < len && (text[j] == ' ' || text[j] == ':')) j++;
            return text + j;
        }
    }
    return NULL;
}

/* Length of a JSON scalar token (number or string) starting at p. */
static size_t token_length(const char *p, const char *end) {
    const char *q = p;
    if (q < end && *q == '"') {
        q++;
        while (q < end && *q != '"') q += (*q == '\\') ? 2 : 1;
        return (size_t)(q + 1 - p);
    }
    while (q < end && *q != ',' && *q != '}' && *q != ' ') q++;
    return (size_t)(q - p);
}

static void handle_text(conn_t *c, const char *text, size_t len) {
    const char *end = text + len;
    const char *id = find_value(text, len, "id");
    const char *op = find_value(text, len, "op");
    if (!id) return;
    size_t id_len = token_length(id, end);
    char reply[256];
    int n;
    if (op && (size_t)(end - op) >= 6 && memcmp(op, "\"ping\"", 6) == 0) {
        n = snprintf(reply, sizeof reply, "{\"id\":%.*s,\"result\":{\"pong\":true,\"serverTime\":%.3f}}",
                     (int)id_len, id, now_seconds());
        append_text(c, reply, (size_t)n);
    } else if (op && (size_t)(end - op) >= 7 && memcmp(op, "\"login\"", 7) == 0 && c->user < 0) {
        const char *uid = find_value(text, len, "uid");
        if (!uid || *uid != '"') return;
        size_t uid_len = token_length(uid, end);
        int user = find_user(uid + 1, uid_len >= 2 ? uid_len - 2 : 0);
        if (user < 0) return;
        n = snprintf(reply, sizeof reply, "{\"id\":%.*s,\"result\":{\"connectionId\":\"c%lu\",\"serverTime\":%.3f}}",
                     (int)id_len, id, c->id, now_seconds());
        append_text(c, reply, (size_t)n);
        c->user = user;
        const char *mode = find_value(text, len, "mode");
        if (!(mode && (size_t)(end - mode) >= 6 && memcmp(mode, "\"none\"", 6) == 0)) subscribe(c);
        if (users[user].online++ == 0) broadcast(user, 1);
    } else if (op && (size_t)(end - op) >= 8 && memcmp(op, "\"logout\"", 8) == 0) {
        n = snprintf(reply, sizeof reply, "{\"id\":%.*s,\"result\":{}}", (int)id_len, id);
        append_text(c, reply, (size_t)n);
        forget(c);
        const char *reason = "logged out";
        wslay_event_queue_close(c->ws, 1000, (const uint8_t *)reason, strlen(reason));
    } else {
        n = snprintf(reply, sizeof reply, "{\"id\":%.*s,\"result\":{}}", (int)id_len, id);
        append_text(c, reply, (size_t)n);
    }
}

/* ---- wslay callbacks ---- */

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user) {
    (void)flags;
    conn_t *c = user;
    if (c->in_len == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    size_t n = len < c->in_len ? len : c->in_len;
    memcpy(buf, c->in, n);
    c->in += n;
    c->in_len -= n;
    return (ssize_t)n;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user) {
    (void)ctx; (void)flags;
    append_raw(user, data, len);
    return (ssize_t)len;
}

static void ws_message(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg, void *user) {
    (void)ctx;
    if (arg->opcode == WSLAY_TEXT_FRAME) handle_text(user, (const char *)arg->msg, arg->msg_length);
}

static const struct wslay_event_callbacks callbacks = {
    ws_recv, ws_send, NULL, NULL, NULL, NULL, ws_message,
};

/* ---- connections ---- */

static void on_closed(uv_handle_t *handle) {
    conn_t *c = handle->data;
    forget(c);
    if (c->ws) wslay_event_context_free(c->ws);
    free(c->head);
    free(c->out);
    free(c);
}

static void close_conn(conn_t *c) {
    if (c->closing) return;
    c->closing = 1;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static int upgrade(conn_t *c) {
    const char *p = c->head;
    const char *key = NULL;
    size_t key_len = 0;
    while ((p = strstr(p, "\r\n")) != NULL) {
        p += 2;
        if (strncasecmp(p, "Sec-WebSocket-Key:", 18) == 0) {
            key = p + 18;
            while (*key == ' ') key++;
            const char *e = strstr(key, "\r\n");
            key_len = e ? (size_t)(e - key) : 0;
            while (key_len && key[key_len - 1] == ' ') key_len--;
            break;
        }
    }
    if (!key || key_len == 0 || key_len > 64) return -1;
    char joined[128];
    int joined_len = snprintf(joined, sizeof joined, "%.*s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", (int)key_len, key);
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)joined, (size_t)joined_len, digest);
    unsigned char accept[64];
    EVP_EncodeBlock(accept, digest, SHA_DIGEST_LENGTH);
    char response[256];
    int n = snprintf(response, sizeof response,
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: %s\r\n\r\n", accept);
    append_raw(c, response, (size_t)n);
    wslay_event_context_server_init(&c->ws, &callbacks, c);
    wslay_event_config_set_max_recv_msg_length(c->ws, 65536);
    return 0;
}

static void feed(conn_t *c, const uint8_t *bytes, size_t len) {
    c->in = bytes;
    c->in_len = len;
    if (wslay_event_recv(c->ws) != 0) { close_conn(c); return; }
    if (wslay_event_send(c->ws) != 0) { close_conn(c); return; }
    /* A finished closing handshake needs a flush even with nothing to write. */
    if (!wslay_event_want_read(c->ws) && !wslay_event_want_write(c->ws)) mark_dirty(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)h; (void)suggested;
    *buf = uv_buf_init(read_buffer, sizeof read_buffer);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    conn_t *c = stream->data;
    if (nread < 0) { flush_one(c); close_conn(c); return; }
    if (nread == 0) return;
    if (c->ws) { feed(c, (const uint8_t *)buf->base, (size_t)nread); return; }
    if (c->head_len + (size_t)nread > HEAD_LIMIT) { close_conn(c); return; }
    c->head = realloc(c->head, c->head_len + (size_t)nread + 1);
    memcpy(c->head + c->head_len, buf->base, (size_t)nread);
    c->head_len += (size_t)nread;
    c->head[c->head_len] = 0;
    char *end = strstr(c->head, "\r\n\r\n");
    if (!end) return;
    size_t used = (size_t)(end + 4 - c->head);
    if (upgrade(c) != 0) { close_conn(c); return; }
    size_t rest = c->head_len - used;
    if (rest) {
        uint8_t *copy = malloc(rest);
        memcpy(copy, c->head + used, rest);
        feed(c, copy, rest);
        free(copy);
    }
    free(c->head);
    c->head = NULL;
    c->head_len = 0;
}

static void on_connection(uv_stream_t *server, int status) {
    if (status < 0) return;
    conn_t *c = calloc(1, sizeof *c);
    c->user = -1;
    c->id = next_conn_id++;
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) { close_conn(c); return; }
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void on_signal(uv_signal_t *handle, int signum) {
    (void)signum;
    uv_stop(handle->loop);
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 8090;
    const char *host = argc > 2 ? argv[2] : "127.0.0.1";
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    signal(SIGPIPE, SIG_IGN);
    loop = uv_default_loop();
    uv_tcp_t server;
    struct sockaddr_in address;
    uv_ip4_addr(host, port, &address);
    uv_tcp_init(loop, &server);
    if (uv_tcp_bind(&server, (const struct sockaddr *)&address, 0) != 0 ||
        uv_listen((uv_stream_t *)&server, 4096, on_connection) != 0) {
        fprintf(stderr, "ceiling: cannot listen on %s:%d\n", host, port);
        return 1;
    }
    struct sockaddr_storage bound;
    int bound_len = sizeof bound;
    uv_tcp_getsockname(&server, (struct sockaddr *)&bound, &bound_len);
    printf("ceiling listening on ws://%s:%d/v1/ws\n", host, ntohs(((struct sockaddr_in *)&bound)->sin_port));
    fflush(stdout);
    uv_check_init(loop, &flusher_check);
    uv_check_start(&flusher_check, on_check);
    uv_unref((uv_handle_t *)&flusher_check);
    uv_prepare_init(loop, &flusher_prepare);
    uv_prepare_start(&flusher_prepare, on_prepare);
    uv_unref((uv_handle_t *)&flusher_prepare);
    uv_signal_t sigint, sigterm;
    uv_signal_init(loop, &sigint);
    uv_signal_start(&sigint, on_signal, SIGINT);
    uv_signal_init(loop, &sigterm);
    uv_signal_start(&sigterm, on_signal, SIGTERM);
    uv_run(loop, UV_RUN_DEFAULT);
    return 0;
}
