/* "Did you mean": the one rule that names a likely typo's intended word,
 * for the command line (commands, long options) and the config parser
 * (op names). */
#ifndef TB_BASE_SUGGEST_H
#define TB_BASE_SUGGEST_H

/* Edit distance between a and b counting insertions, deletions,
 * substitutions and swaps of two neighbours as one edit each (optimal
 * string alignment).  Words longer than 63 bytes are 99 away from
 * everything. */
int tb_edit_distance(const char *a, const char *b);

/* The name among names[0..n) (NULL entries skipped) nearest to word when
 * it is at most max_edits edits away, else NULL.  Of equally near names
 * the first wins. */
const char *tb_closest_within(const char *word, const char *const *names,
                              int n, int max_edits);

/* tb_closest_within with the typo rule: 1 edit for words of up to 4
 * bytes, a third of the word for longer ones. */
const char *tb_closest(const char *word, const char *const *names, int n);

#endif
