/* Log level names, as they appear in a record's [LEVEL] field and in the
 * HBG_LOG_LEVEL switch. */
#include <stddef.h>
#include <strings.h>

#include "hbg/trace.h"
#include "trace/level.h"

static const char *const names[] = {"DEBUG", "INFO", "TIMING", "WARN", "ERROR", "OFF"};
static const char *const lower[] = {"debug", "info", "timing", "warn", "error", "off"};

_Static_assert(sizeof names / sizeof names[0] == HBG_LOG_OFF + 1, "every level needs a name");
_Static_assert(sizeof lower / sizeof lower[0] == HBG_LOG_OFF + 1, "every level needs a name");

const char *hbg_level_name(hbg_level l)
{
    if ((unsigned)l > HBG_LOG_OFF)
        return "?";
    return names[l];
}

const char *hbg__level_lower(hbg_level l)
{
    if ((unsigned)l > HBG_LOG_OFF)
        return "?";
    return lower[l];
}

hbg_status hbg_level_parse(const char *s, hbg_level *out)
{
    if (!s || !out)
        return HBG_E_INVAL;
    for (int i = 0; i <= HBG_LOG_OFF; i++) {
        if (strcasecmp(s, names[i]) == 0) {
            *out = (hbg_level)i;
            return HBG_OK;
        }
    }
    return HBG_E_INVAL;
}
