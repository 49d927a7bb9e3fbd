/* Case ids against patterns (idmatch.h). */
#include "idmatch.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

bool tb_case_id_match(const char *pattern, const char *id)
{
    if (!strcmp(pattern, id))
        return true;
    /* Quote the brackets: fnmatch would read "[isa=auto,threads=1]" as a
     * set of characters. */
    size_t n = strlen(pattern), k = 0;
    char stackbuf[512];
    char *q = 2 * n + 1 <= sizeof stackbuf ? stackbuf : malloc(2 * n + 1);
    if (!q)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (pattern[i] == '\\' && i + 1 < n) {
            q[k++] = pattern[i++];
            q[k++] = pattern[i];
            continue;
        }
        if (pattern[i] == '[' || pattern[i] == ']')
            q[k++] = '\\';
        q[k++] = pattern[i];
    }
    q[k] = '\0';
    bool m = fnmatch(q, id, 0) == 0;
    if (q != stackbuf)
        free(q);
    return m;
}
