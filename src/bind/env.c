/* hbg_runtime_config_from_env: the library reads its own switches.
 *
 * Every value is checked before anything is changed, so a bad variable
 * leaves the caller's config as it was; the message names the variable
 * whose value is in effect (hbg's name or the original's), since that is
 * the one the user has to fix.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hbg/runtime.h"
#include "util/printable.h"

static hbg_status bad(char *msg, size_t cap, const char *ours, const char *seed, const char *expected)
{
    const char *which = hbg_switch_which(ours, seed);
    if (msg && cap) {
        snprintf(msg, cap, "%s=%s is not %s", which, getenv(which), expected);
        hbg__mask_controls(msg); /* one line, whatever the value holds */
    }
    return HBG_E_BAD_ENV;
}

#define SWITCH_VALUES "a switch value (expected 1/true/on/yes or 0/false/off/no/empty)"

hbg_status hbg_runtime_config_from_env(hbg_runtime_config *cfg, char *msg, size_t cap)
{
    if (msg && cap)
        msg[0] = 0;
    /* The caller prints msg on any failure: it must say this one too. */
    if (!cfg) {
        if (msg && cap)
            snprintf(msg, cap, "no config (hbg_runtime_config is NULL)");
        return HBG_E_INVAL;
    }
    bool breakdown = cfg->breakdown, records = cfg->records != NULL, skip = cfg->skip_device;
    hbg_level level;
    if (hbg_switch_read(HBG_SW_BREAKDOWN, &breakdown))
        return bad(msg, cap, HBG_SW_BREAKDOWN, SWITCH_VALUES);
    if (hbg_switch_read(HBG_SW_RECORDS, &records))
        return bad(msg, cap, HBG_SW_RECORDS, SWITCH_VALUES);
    if (hbg_switch_read(HBG_SW_SKIP_DEVICE, &skip))
        return bad(msg, cap, HBG_SW_SKIP_DEVICE, SWITCH_VALUES);
    if (hbg_switch_level(&level))
        return bad(msg, cap, HBG_SW_LOG_LEVEL, "a log level (expected debug|info|timing|warn|error|off)");
    hbg_recpool *pool = records ? cfg->records : NULL;
    if (records && !pool) {
        unsigned threads = cfg->record_threads ? cfg->record_threads : HBG_DEFAULT_RECORD_THREADS;
        unsigned per = cfg->records_per_thread ? cfg->records_per_thread : HBG_DEFAULT_RECORDS_PER_THREAD;
        hbg_status st = hbg_recpool_create(threads, per, &pool);
        if (st) {
            if (msg && cap)
                snprintf(msg, cap, "a record pool of %u x %u records: %s", threads, per, hbg_strerror(st));
            return st;
        }
    }
    cfg->breakdown = breakdown;
    cfg->records = pool;
    cfg->skip_device = skip;
    cfg->log_level = level;
    return HBG_OK;
}
