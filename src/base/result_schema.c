/* The names of the result file's vocabulary (result_schema.h). */
#include "result_schema.h"

#include <string.h>

#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

static const char *const status_names[] = {
#define TB_RES_STATUS_NAME(e, s, k) s,
    TB_RES_STATUSES(TB_RES_STATUS_NAME)
#undef TB_RES_STATUS_NAME
};

static const tb_res_status_kind status_kinds[] = {
#define TB_RES_STATUS_KIND(e, s, k) k,
    TB_RES_STATUSES(TB_RES_STATUS_KIND)
#undef TB_RES_STATUS_KIND
};

const char *tb_res_status_name(int s)
{
    return s >= 0 && s < COUNT(status_names) ? status_names[s] : "?";
}

int tb_res_status_parse(const char *s)
{
    for (int i = 0; s && i < COUNT(status_names); i++)
        if (!strcmp(s, status_names[i]))
            return i;
    return -1;
}

tb_res_status_kind tb_res_status_kind_of(const char *s)
{
    int k = tb_res_status_parse(s);
    return k < 0 ? TB_RES_FAILED : status_kinds[k];
}

const char *tb_res_counter_name(int k)
{
    static const char *const names[] = {
#define TB_RES_CTR_NAME(e, k) TB_RES_KEY(k),
        TB_RES_COUNTERS(TB_RES_CTR_NAME)
#undef TB_RES_CTR_NAME
    };
    return k >= 0 && k < COUNT(names) ? names[k] : "?";
}

const char *tb_res_dir_name(int d)
{
    static const char *const names[] = {
#define TB_RES_DIR_NAME(e, k) TB_RES_KEY(k),
        TB_RES_CUPTI_DIRS(TB_RES_DIR_NAME)
#undef TB_RES_DIR_NAME
    };
    return d >= 0 && d < COUNT(names) ? names[d] : "?";
}

const char *tb_res_cupti_name(int k)
{
    static const char *const names[] = {
#define TB_RES_CUPTI_NAME(e, s) s,
        TB_RES_CUPTI_COUNTERS(TB_RES_CUPTI_NAME)
#undef TB_RES_CUPTI_NAME
    };
    return k >= 0 && k < COUNT(names) ? names[k] : "?";
}

static const char *const verdict_names[] = {
#define TB_RES_VERDICT_NAME(e, s, t) s,
    TB_RES_VERDICTS(TB_RES_VERDICT_NAME)
#undef TB_RES_VERDICT_NAME
};

const char *tb_res_verdict_name(int v)
{
    return v >= 0 && v < COUNT(verdict_names) ? verdict_names[v] : "?";
}

tb_res_tone tb_res_word_tone(const char *word)
{
    static const tb_res_tone verdict_tones[] = {
#define TB_RES_VERDICT_TONE(e, s, t) t,
        TB_RES_VERDICTS(TB_RES_VERDICT_TONE)
#undef TB_RES_VERDICT_TONE
    };
    static const tb_res_tone kind_tone[] = {
        [TB_RES_RAN] = TB_RES_GOOD,
        [TB_RES_NOT_RUN] = TB_RES_WARN,
        [TB_RES_FAILED] = TB_RES_BAD,
    };
    int s = tb_res_status_parse(word);
    if (s >= 0)
        return kind_tone[status_kinds[s]];
    for (int v = 0; word && v < COUNT(verdict_names); v++)
        if (!strcmp(word, verdict_names[v]))
            return verdict_tones[v];
    return TB_RES_PLAIN;
}
