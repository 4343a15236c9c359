/* A child's pending signals and exit, from /proc (see procsig.h). */
#include "cli/procsig.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PF_EXITING of the kernel's include/linux/sched.h: set as the process
 * begins to exit, before its memory and its files go. */
#define PROC_PF_EXITING 0x4u

/* The mask a "KEY:\t<hex>" line of status gives, 0 without one. Keys are
 * matched at a line's start only: no value holds a line end. */
static uint64_t status_mask(const char *status, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = status; *p;) {
        if (!strncmp(p, key, n) && p[n] == ':')
            return strtoull(p + n + 1, NULL, 16);
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return 0;
}

bool procsig_status_pending(const char *status, int sig)
{
    if (sig < 1 || sig > 64)
        return false;
    uint64_t bit = (uint64_t)1 << (sig - 1);
    return ((status_mask(status, "SigPnd") | status_mask(status, "ShdPnd")) & bit) != 0;
}

bool procsig_stat_exiting(const char *stat)
{
    /* the name may hold ") ": the fields start after the last ')' */
    const char *p = strrchr(stat, ')');
    if (!p)
        return false;
    p++;
    /* state, ppid, pgrp, session, tty_nr, tpgid: then the flags */
    for (int field = 0; field < 6; field++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return false;
        p += strcspn(p, " ");
    }
    char *end;
    unsigned long flags = strtoul(p, &end, 10);
    return end != p && (flags & PROC_PF_EXITING) != 0;
}

/* The text of /proc/PID/NAME in buf (cut to its size), false when it
 * cannot be read. For stat, whose name is at most 16 bytes: one read of
 * 4 KiB holds it whole. */
static bool read_proc(pid_t pid, const char *name, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, buf, cap - 1);
    close(fd);
    if (got <= 0)
        return false;
    buf[got] = '\0';
    return true;
}

/* Whether sig is pending in /proc/PID/status, read a line at a time:
 * its Groups line, before the masks, lists every group of the process,
 * and a user in some hundreds of groups (a directory service's, of ten
 * digits each) puts SigPnd past the first 4 KiB; so only each line's
 * start is looked at, however long the line. */
static bool status_pending(pid_t pid, int sig)
{
    char path[64], piece[128];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool pending = false, at_start = true;
    while (!pending && fgets(piece, sizeof piece, f)) {
        if (at_start)
            pending = procsig_status_pending(piece, sig);
        at_start = strchr(piece, '\n') != NULL;
    }
    fclose(f);
    return pending;
}

bool procsig_ending(pid_t pid, int sig)
{
    if (status_pending(pid, sig))
        return true;
    char buf[4096];
    return read_proc(pid, "stat", buf, sizeof buf) && procsig_stat_exiting(buf);
}
