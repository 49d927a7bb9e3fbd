/* The terminal: its width and whether to use colour (term.c); ids are
 * shortened to fit by tb_shorten_middle (report/table.h).  Files always
 * get the full text and no escapes. */
#ifndef TB_CLI_TERM_H
#define TB_CLI_TERM_H

#include <stdbool.h>
#include <stddef.h>

/* Columns of the terminal on fd: the window size when fd is a terminal,
 * else $COLUMNS when it is a number, else 80.  At least 20. */
int tb_term_width(int fd);

/* Colour on fd?  Only when fd is a terminal, $NO_COLOR is unset or
 * empty (no-color.org) and $TERM is not "dumb". */
bool tb_term_color(int fd);

/* ANSI colour for a case status or a verdict word: green for ok and
 * improvements, red for failures and regressions, yellow for cases that
 * did not run; "" for anything else.  TB_TERM_RESET ends it. */
const char *tb_term_status_color(const char *word);
#define TB_TERM_RESET "\033[0m"
#define TB_TERM_YELLOW "\033[33m"

#endif
