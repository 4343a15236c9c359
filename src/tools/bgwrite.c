/* A ring of buffers: the caller fills one while the thread writes the
 * ones handed over before it, oldest first. */
#include "tools/bgwrite.h"
#include "tools/hugemem.h"
#include "util/fdio.h"
#include "util/quietthread.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Four: the caller fills one, the thread writes one, and two absorb the
 * moments when either runs ahead (a page-cache write is not steady). */
#define BW_NBUF 4

struct bw {
    int fd;
    size_t size;
    char *mem;
    hm_block blk;            /* mem's pages: huge where the kernel has them (one fault, not hundreds) */
    size_t len[BW_NBUF];
    bool full[BW_NBUF];      /* handed over and not yet written */
    int head;                /* the caller's slot */
    int err;                 /* the first failed write's errno; later buffers are dropped */
    bool stop;
    pthread_mutex_t mu;
    pthread_cond_t filled;   /* a slot was handed over, or stop */
    pthread_cond_t emptied;  /* a slot was written */
    pthread_t th;
};

static void *writer_main(void *arg)
{
    bw *b = arg;
    for (int k = 0;; k = (k + 1) % BW_NBUF) {
        pthread_mutex_lock(&b->mu);
        while (!b->full[k] && !b->stop)
            pthread_cond_wait(&b->filled, &b->mu);
        /* slots fill in order: when this one is empty, so is every later one */
        bool done = !b->full[k];
        bool failed = b->err != 0;
        pthread_mutex_unlock(&b->mu);
        if (done)
            break;
        int e = failed ? 0 : hbg__write_all(b->fd, b->mem + (size_t)k * b->size, b->len[k]);
        pthread_mutex_lock(&b->mu);
        if (e && !b->err)
            b->err = e;
        b->full[k] = false;
        pthread_cond_signal(&b->emptied);
        pthread_mutex_unlock(&b->mu);
    }
    return NULL;
}

bw *bw_open(int fd, size_t size)
{
    if (fd < 0 || size == 0 || size > SIZE_MAX / BW_NBUF)
        return NULL;
    bw *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->fd = fd;
    b->size = size;
    if (hm_alloc(&b->blk, size * BW_NBUF) != 0)
        goto fail_blk;
    b->mem = b->blk.p;
    if (pthread_mutex_init(&b->mu, NULL) != 0)
        goto fail_mem;
    if (pthread_cond_init(&b->filled, NULL) != 0)
        goto fail_mu;
    if (pthread_cond_init(&b->emptied, NULL) != 0)
        goto fail_filled;
    if (hbg__thread_start_quiet(&b->th, writer_main, b) != 0)
        goto fail_emptied;
    return b;
fail_emptied:
    pthread_cond_destroy(&b->emptied);
fail_filled:
    pthread_cond_destroy(&b->filled);
fail_mu:
    pthread_mutex_destroy(&b->mu);
fail_mem:
    hm_free(&b->blk);
fail_blk:
    free(b);
    return NULL;
}

char *bw_buf(bw *b)
{
    return b->mem + (size_t)b->head * b->size;
}

char *bw_pass(bw *b, size_t n)
{
    if (!n)
        return bw_buf(b);
    pthread_mutex_lock(&b->mu);
    b->len[b->head] = n;
    b->full[b->head] = true;
    pthread_cond_signal(&b->filled);
    b->head = (b->head + 1) % BW_NBUF;
    while (b->full[b->head])
        pthread_cond_wait(&b->emptied, &b->mu);
    pthread_mutex_unlock(&b->mu);
    return bw_buf(b);
}

int bw_sync(bw *b)
{
    pthread_mutex_lock(&b->mu);
    /* the slot before the caller's is the last handed over */
    int last = (b->head + BW_NBUF - 1) % BW_NBUF;
    while (b->full[last])
        pthread_cond_wait(&b->emptied, &b->mu);
    int e = b->err;
    pthread_mutex_unlock(&b->mu);
    return e;
}

int bw_close(bw *b)
{
    pthread_mutex_lock(&b->mu);
    b->stop = true;
    pthread_cond_signal(&b->filled);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->th, NULL);
    int e = b->err;
    pthread_cond_destroy(&b->emptied);
    pthread_cond_destroy(&b->filled);
    pthread_mutex_destroy(&b->mu);
    hm_free(&b->blk);
    free(b);
    return e;
}
