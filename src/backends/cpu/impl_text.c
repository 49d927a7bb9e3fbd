/* Impl texts that say what a call of a registry row did (einsum's plan):
 * kernel lookup hands out the text's address, each call rewrites it
 * (cpu_internal.h, tb_cpu_impl_text). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cpu_internal.h"

/* One text per (row, key); never freed.  When full, the oldest entry is
 * taken over: the harness copies a case's text right after the case, and
 * no case makes TB_CPU_IMPL_TEXTS others meanwhile. */
#define TB_CPU_IMPL_TEXTS 256
static struct {
    const char *row;
    double key;
    char text[TB_CPU_IMPL_TEXT];
} texts[TB_CPU_IMPL_TEXTS];
static int n_texts, next_text;
static pthread_mutex_t texts_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry's text; create: add it when absent (else NULL).  Call with
 * the lock held. */
static char *entry(const char *row, double key, bool create)
{
    for (int i = 0; i < n_texts; i++)
        if (texts[i].row == row && texts[i].key == key)
            return texts[i].text;
    if (!create)
        return NULL;
    int i = n_texts < TB_CPU_IMPL_TEXTS ? n_texts++ : next_text;
    next_text = (i + 1) % TB_CPU_IMPL_TEXTS;
    texts[i].row = row;
    texts[i].key = key;
    return texts[i].text;
}

const char *tb_cpu_impl_text(const char *row, double key, const char *text)
{
    pthread_mutex_lock(&texts_lock);
    char *t = entry(row, key, true);
    snprintf(t, TB_CPU_IMPL_TEXT, "%s", text);
    pthread_mutex_unlock(&texts_lock);
    return t;
}

void tb_cpu_impl_text_update(const char *row, double key, const char *text)
{
    pthread_mutex_lock(&texts_lock);
    char *t = entry(row, key, false);
    if (t) { /* a bounded copy: snprintf's parsing cost einsum1 60 ns */
        size_t n = strnlen(text, TB_CPU_IMPL_TEXT - 1);
        memcpy(t, text, n);
        t[n] = 0;
    }
    pthread_mutex_unlock(&texts_lock);
}
