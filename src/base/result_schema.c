/* The names of the result file's vocabulary (result_schema.h). */
#include "result_schema.h"

#include <string.h>

#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

/* A word of the vocabulary and what it means: a status's kind, a
 * verdict's tone. */
typedef struct {
    const char *name;
    int what;
} word;

static const word statuses[] = {
#define TB_RES_STATUS_WORD(e, s, k) {s, k},
    TB_RES_STATUSES(TB_RES_STATUS_WORD)
#undef TB_RES_STATUS_WORD
};

static const word verdicts[] = {
#define TB_RES_VERDICT_WORD(e, s, t) {s, t},
    TB_RES_VERDICTS(TB_RES_VERDICT_WORD)
#undef TB_RES_VERDICT_WORD
};

/* The index of name in words[0..n-1], -1 when absent. */
static int find(const word *words, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(name, words[i].name))
            return i;
    return -1;
}

const char *tb_res_status_name(int s)
{
    return s >= 0 && s < COUNT(statuses) ? statuses[s].name : "?";
}

int tb_res_status_parse(const char *s)
{
    return find(statuses, COUNT(statuses), s);
}

cJSON *tb_res_summary_of(const cJSON *cases)
{
    int n[TB_RES_NSTATUSES] = {0};
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(c,
                                                           TB_RES_KEY(status));
        int k = cJSON_IsString(st) ? tb_res_status_parse(st->valuestring)
                                   : -1;
        if (k >= 0)
            n[k]++;
    }
    return tb_res_summary_counts(cJSON_GetArraySize(cases), n);
}

cJSON *tb_res_summary_counts(int cases, const int *n)
{
    cJSON *sum = cJSON_CreateObject();
    bool ok = sum && cJSON_AddNumberToObject(sum, TB_RES_KEY(cases), cases);
    for (int s = 0; ok && s < TB_RES_NSTATUSES; s++)
        ok = cJSON_AddNumberToObject(sum, tb_res_status_name(s), n[s]);
    if (!ok) {
        cJSON_Delete(sum);
        return NULL;
    }
    return sum;
}

tb_res_status_kind tb_res_status_kind_of(const char *s)
{
    int k = tb_res_status_parse(s);
    return k < 0 ? TB_RES_FAILED : (tb_res_status_kind)statuses[k].what;
}

const tb_res_counter_info *tb_res_counter_of(int k)
{
    static const tb_res_counter_info info[] = {
#define TB_RES_CTR_INFO(e, k, m, u, s, t, c)                              \
    {TB_RES_KEY(k), TB_RES_##m, TB_RES_##u, TB_RES_##s, t, c},
        TB_RES_COUNTERS(TB_RES_CTR_INFO)
#undef TB_RES_CTR_INFO
    };
    return k >= 0 && k < COUNT(info) ? &info[k] : NULL;
}

const char *tb_res_counter_name(int k)
{
    const tb_res_counter_info *i = tb_res_counter_of(k);
    return i ? i->name : "?";
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

const char *tb_res_verdict_name(int v)
{
    return v >= 0 && v < COUNT(verdicts) ? verdicts[v].name : "?";
}

tb_res_tone tb_res_word_tone(const char *name)
{
    static const tb_res_tone kind_tone[] = {
        [TB_RES_RAN] = TB_RES_GOOD,
        [TB_RES_NOT_RUN] = TB_RES_WARN,
        [TB_RES_FAILED] = TB_RES_BAD,
    };
    int s = tb_res_status_parse(name);
    if (s >= 0)
        return kind_tone[statuses[s].what];
    int v = find(verdicts, COUNT(verdicts), name);
    return v >= 0 ? (tb_res_tone)verdicts[v].what : TB_RES_PLAIN;
}
