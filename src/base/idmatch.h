/* The one matcher of case ids: what `run --filter`/`--exclude`, `ab`,
 * `show`, TBENCH_FAULT and the targets files select cases with. */
#ifndef TB_BASE_IDMATCH_H
#define TB_BASE_IDMATCH_H

#include <stdbool.h>

/* Does case id match pattern?  Yes when it is the id itself, or when it
 * matches as an fnmatch() glob in which '[' and ']' stand for themselves
 * (ids contain them: "add/7x13,7x13/f32/cpu[isa=auto,threads=1]"), so
 * an id pasted as printed selects its case; '*' and '?' are wildcards
 * and a backslash quotes the next character. */
bool tb_case_id_match(const char *pattern, const char *id);

#endif
