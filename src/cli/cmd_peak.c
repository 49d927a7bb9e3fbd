/* tbench peak: measure the machine peaks (memory bandwidth, FMA FLOP/s),
 * store them in the peak cache that `tbench run` reads, and print them
 * as a table or JSON.  See peak.h for the method. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../base/fileio.h"
#include "commands.h"
#include "../harness/peak.h"


/* The options `peak` parses (and `tbench __options` lists). */
static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"output", required_argument, NULL, 'o'},
    {"quick", no_argument, NULL, 'Q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_peak = {longopts, ":o:h", NULL};
int tb_cmd_peak(int argc, char **argv)
{
    bool json = false;
    const char *outfile = NULL;
    tb_peak_opts opts = {0};
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_peak, &first)) !=
           -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'o': outfile = optarg; break;
        case 'Q': opts.quick = true; break;
        case 'h': tb_cmd_usage(stdout, "peak"); return TB_EXIT_OKAY;
        default:
            return tb_opt_error("peak", c, argv, longopts);
        }
    }
    if (optind < argc)
        return tb_usage_error("peak: unexpected argument '%s'", argv[optind]);
    if (outfile && tb_out_check("peak", outfile, false))
        return TB_EXIT_USAGE;

    char err[1024];
    const char *cache = tb_peak_cache_path();
    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "tbench: measuring machine peaks (%s)\n",
                opts.quick ? "--quick: about a second"
                           : "a few seconds; keep the machine quiet");
        opts.progress = stderr;
    }
    cJSON *peaks = NULL;
    if (tb_peaks_measure(&opts, &peaks, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_CASES;
    }
    int rc = TB_EXIT_OKAY;
    if (tb_peak_cache_store(cache, peaks, err, sizeof err)) {
        fprintf(stderr, "tbench: warning: peaks not cached: %s\n", err);
        cache = NULL;
    } else if (err[0]) { /* a quick measurement left a full one */
        fprintf(stderr, "tbench: note: not cached: %s\n", err);
        cache = NULL;
    }
    char *text = cJSON_Print(peaks);
    if (!text) {
        fprintf(stderr, "tbench: out of memory\n");
        cJSON_Delete(peaks);
        return TB_EXIT_CASES;
    }
    if (outfile &&
        tb_write_atomic(outfile, text, strlen(text), err, sizeof err)) {
        fprintf(stderr, "tbench: -o: %s\n", err);
        rc = TB_EXIT_CASES;
    }
    if (json) {
        puts(text);
    } else {
        tb_peaks_print(stdout, peaks);
        if (cache)
            printf("cached in %s (tbench run reads it)\n", cache);
    }
    free(text);
    cJSON_Delete(peaks);
    return rc;
}
