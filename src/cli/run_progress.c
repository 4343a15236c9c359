/* hbg run's progress line (see run_progress.h). */
#include "cli/run_progress.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "hbg/trace.h"
#include "tools/diag.h"

#define SEC 1000000000ull

bool run_progress_start(run_progress *p, bool log_on_stderr, uint32_t total)
{
    *p = (run_progress){.on = !log_on_stderr, .tty = isatty(STDERR_FILENO) == 1, .total = total};
    p->every = 30 * SEC;
    const char *env = getenv("HBG_PROGRESS_S");
    if (env && *env) {
        char *end;
        errno = 0;
        double s = strtod(env, &end);
        /* decimal only: strtod would also take 0x10 (16) or 1e3; a
         * fraction may leave out its 0 (.5) */
        if (errno || *end || strspn(env, "0123456789.") != strlen(env) || !(s <= 86400)) {
            fprintf(stderr, "hbg run: HBG_PROGRESS_S=%s is not a number of seconds from 0 to 86400\n",
                    dg_shown(env));
            return false;
        }
        p->on = p->on && s > 0;
        p->every = (uint64_t)(s * 1e9);
    }
    p->t0 = hbg_mono_ns();
    /* a terminal from the first second; elsewhere the first line comes
     * after 10 s (or the interval, if shorter) */
    p->next = p->t0 + (p->tty ? SEC : (p->every < 10 * SEC ? p->every : 10 * SEC));
    return true;
}

void run_progress_tick(run_progress *p, uint32_t done)
{
    uint64_t now = hbg_mono_ns();
    if (!p->on || now < p->next)
        return;
    double s = (double)(now - p->t0) / 1e9;
    if (p->tty) {
        fprintf(stderr, "\rhbg run: %u of %u passes, %.0f s ", done, p->total, s);
        p->next = now + SEC / 4;
    } else {
        fprintf(stderr, "hbg run: %u of %u passes after %.0f s\n", done, p->total, s);
        p->next = now + p->every;
    }
    fflush(stderr);
    p->shown = true;
}

void run_progress_end(run_progress *p)
{
    run_progress_clear(p);
}

const char *run_progress_clearing(const run_progress *p)
{
    return p && p->on && p->tty && p->shown ? "\r\033[K" : "";
}

void run_progress_clear(run_progress *p)
{
    const char *c = run_progress_clearing(p);
    if (!*c)
        return;
    fputs(c, stderr);
    p->shown = false; /* nothing on the line: the end has none to clear */
}
