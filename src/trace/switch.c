/* Environment switches.
 *
 * A switch's value is read, not merely tested for presence: the original
 * runtime's "set means on" turned FOO=0 into a trap that enabled FOO. Our
 * name wins over the original runtime's when both are set, so a user can
 * override an inherited variable of the original runtime without unsetting
 * it. An unrecognised value is an error rather than a guess, since a
 * mistyped switch that silently reads as off produces a log that looks
 * fine and measures the wrong thing.
 */
#include <stdlib.h>
#include <strings.h>

#include "hbg/trace.h"

const char *hbg_switch_which(const char *ours, const char *original)
{
    if (ours && getenv(ours))
        return ours;
    if (original && getenv(original))
        return original;
    return NULL;
}

hbg_status hbg_switch_value(const char *v, bool *on)
{
    if (!v || !on)
        return HBG_E_INVAL;
    static const char *const offs[] = {"", "0", "false", "off", "no"};
    static const char *const ons[] = {"1", "true", "on", "yes"};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        if (strcasecmp(v, offs[i]) == 0) {
            *on = false;
            return HBG_OK;
        }
    for (size_t i = 0; i < sizeof ons / sizeof ons[0]; i++)
        if (strcasecmp(v, ons[i]) == 0) {
            *on = true;
            return HBG_OK;
        }
    return HBG_E_INVAL;
}

hbg_status hbg_switch_read(const char *ours, const char *original, bool *on)
{
    if (!ours || !on)
        return HBG_E_INVAL;
    const char *name = hbg_switch_which(ours, original);
    if (!name)
        return HBG_OK;
    return hbg_switch_value(getenv(name), on);
}

hbg_status hbg_switch_level(hbg_level *out)
{
    if (!out)
        return HBG_E_INVAL;
    const char *name = hbg_switch_which(HBG_SW_LOG_LEVEL);
    const char *v = name ? getenv(name) : NULL;
    /* An empty value means "not chosen", like an unset variable. */
    if (!v || !*v) {
        *out = HBG_LOG_TIMING;
        return HBG_OK;
    }
    return hbg_level_parse(v, out);
}
