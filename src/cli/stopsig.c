/* The stop signals (see stopsig.h). */
#include "cli/stopsig.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int g_stop[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (sizeof g_stop / sizeof g_stop[0])
static bool g_caught[NSTOP];

void stopsig_catch(void (*handler)(int))
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = handler;
    /* A signal blocked in the mask the command was started with is the
     * parent's to keep pending, as an ignored one is its to drop: a wait
     * that takes the stop signals itself (sigwaitinfo) would take it from
     * under that mask, while every other wait, which leaves it blocked,
     * never sees it. So neither is caught: both stay as they were, for
     * the command and the children it starts. */
    sigset_t blocked;
    if (sigprocmask(SIG_BLOCK, NULL, &blocked) != 0)
        sigemptyset(&blocked);
    for (size_t i = 0; i < NSTOP; i++)
        g_caught[i] = sigismember(&blocked, g_stop[i]) != 1 && sigaction(g_stop[i], NULL, &old) == 0 &&
                      old.sa_handler != SIG_IGN && sigaction(g_stop[i], &sa, NULL) == 0;
}

/* async-signal-safe: called in a child between fork and exec */
void stopsig_default(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (size_t i = 0; i < NSTOP; i++)
        if (g_caught[i])
            sigaction(g_stop[i], &sa, NULL);
}

void stopsig_block(sigset_t *was)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NSTOP; i++)
        sigaddset(&set, g_stop[i]);
    sigprocmask(SIG_BLOCK, &set, was);
}

void stopsig_caught(sigset_t *set)
{
    for (size_t i = 0; i < NSTOP; i++)
        if (g_caught[i])
            sigaddset(set, g_stop[i]);
}

void stopsig_raise(int sig)
{
    fflush(NULL);
    stopsig_default();
    raise(sig);
    _exit(128 + sig);
}

static struct sigaction g_xfsz; /* SIGXFSZ's action as the command was started with */
static bool g_xfsz_kept;

void stopsig_ignore_xfsz(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = SIG_IGN;
    g_xfsz_kept = sigaction(SIGXFSZ, &sa, &g_xfsz) == 0;
}

void stopsig_inherited(void)
{
    if (g_xfsz_kept)
        sigaction(SIGXFSZ, &g_xfsz, NULL);
}
