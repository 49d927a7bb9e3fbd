/* The growth rule of the arrays that gain one item at a time (the
 * autograd tape, a plan's cases, a chart list): capacity doubles, from
 * a first size. */
#ifndef TB_BASE_GROW_H
#define TB_BASE_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* Room for item n (0 <= n <= *cap) of the array v of *cap items of esz
 * bytes: v itself while n < *cap, else v reallocated to twice *cap items
 * (`first` when *cap is 0) and *cap updated.  NULL when out of memory;
 * then v and *cap are unchanged and the caller still owns v. */
static inline void *tb_grow(void *v, int *cap, int n, size_t esz, int first)
{
    if (n < *cap)
        return v;
    int c = *cap ? 2 * *cap : first;
    void *nv = realloc(v, (size_t)c * esz);
    if (nv)
        *cap = c;
    return nv;
}

#endif
