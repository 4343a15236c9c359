/* libFuzzer target: the log reader (lexer, pass grouping, statistics) and
 * the timeline writer on arbitrary bytes, through both readers: the
 * whole-buffer one (the input is not NUL-terminated, so any read past its
 * end is an ASan report) and the piecewise one `hbg phases` and
 * `hbg timeline` use (fed through a memfd). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/phstats.h"
#include "tools/timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void use(ps_log *L, FILE *sink)
{
    if (L->nused) {
        st_result R;
        st_stat *by_rank = calloc(L->nrank ? L->nrank : 1, sizeof *by_rank);
        if (by_rank)
            st_compute(L, &R, by_rank);
        free(by_rank);
    }
    if (sink) {
        dg_list w;
        dg_init(&w, 100);
        tl_report rep;
        tl_write(L, NULL, 0, sink, &rep, &w);
        dg_free(&w);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    ps_options o = {.keep_first = size && (data[0] & 1), .keep_spans = true};
    ps_log L;
    if (ps_read(&L, "fuzz.log", (const char *)data, size, &o) == HBG_OK)
        use(&L, sink);
    ps_free(&L);

    int fd = memfd_create("fuzz-log", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    lseek(fd, 0, SEEK_SET);
    char err[256];
    o.keep_spans = size > 1 && (data[1] & 1);
    if (ps_read_fd(&L, "fuzz.log", fd, &o, err, sizeof err) == HBG_OK)
        use(&L, o.keep_spans ? sink : NULL);
    ps_free(&L);
    close(fd);
    return 0;
}
