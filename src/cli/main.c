/* tbench command line: the command table, list, --help, --version. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../backends/plugin.h"
#include "../base/error.h"
#include "../base/strbuf.h"
#include "../base/suggest.h"
#include "../report/compare.h"
#include "../report/export.h"
#include <cjson/cJSON.h>
#include "commands.h"
#include "tb_commit.h"
#include "tb_config.h"

/* The table of commands: adding a command is one row here plus its
 * tb_cmd_* function in its own file.  --help is generated from the
 * rows, so it lists exactly what exists. */
static const tb_command commands[] = {
    {"run", "CONFIG... [options] | --op OP --shape S [options]",
     "run every case of the configs' matrices\n"
     "    -o, --output DIR      write DIR/results.json and DIR/results.csv\n"
     "                          (default: a new folder under results/);\n"
     "                          '-o -': results.json on stdout, nothing\n"
     "                          else there (table and summary on stderr)\n"
     "        --op OP           run OP without a config file:\n"
     "    -s, --shape S         its shapes, e.g. 1024x1024 (all inputs) or\n"
     "                          64x128,128x32 (one per input); repeat it\n"
     "                          for a sweep (--shape 256x256 --shape 1024x1024)\n"
     "                          or give a range A..B[*F] (A, A*F, ... up to\n"
     "                          B; F 2 unless given): 2^10..2^24,\n"
     "                          1000..1e6*10, 64..1024x64..1024 (ranged dims\n"
     "                          step together)\n"
     "    -p, --params K=V,...  its parameters, e.g. axis=0,keepdim=true\n"
     "    -d, --dtype D,...     its dtypes (default f32): f32, f64, bf16,\n"
     "                          f16, e.g. f32,bf16\n"
     "                          (backend: --backend, default cpu; the config\n"
     "                          written for it is kept in results.json)\n"
     "        --list-cases      print the id of every case the run would\n"
     "                          measure (with --shard, that shard's), one\n"
     "                          per line, and stop\n"
     "        --warmup-ms MS, --warmup-iters N, --sample-ms MS,\n"
     "        --min-samples N, --max-samples N, --ci-target F,\n"
     "        --max-time S, --rounds N, --timeout S\n"
     "                          override the configs' warmup/measure\n"
     "                          settings of the same names (ranges as in\n"
     "                          docs/CONFIG.md); results record the values\n"
     "                          used\n"
     "    -f, --filter GLOB     run only cases whose id matches GLOB, e.g.\n"
     "                          'matmul*' or '*/f64/*' (ids: docs/FORMAT.md);\n"
     "                          an id as printed matches itself ('[' and ']'\n"
     "                          are literal); repeat to run the union\n"
     "    -x, --exclude GLOB    leave out cases whose id matches GLOB\n"
     "                          (repeatable; applied after --filter)\n"
     "    -b, --backend NAME    run only on backend NAME (with its default\n"
     "                          axis values if the config does not list it);\n"
     "                          repeat it or join names by ',' for several;\n"
     "                          with --op also NAME[AXIS=V,V;AXIS=V], the\n"
     "                          id's syntax, every combination run, e.g.\n"
     "                          -b 'cpu[threads=1,2;isa=avx2,avx512]'\n"
     "    -q, --quiet           no progress line and no table (the table:\n"
     "                          a case a line; median = time of one call;\n"
     "                          ci = the 95% CI's width, % of the median;\n"
     "                          samples = n x calls each; on a terminal ids\n"
     "                          are shortened to fit: docs/FORMAT.md)\n"
     "        --save-baseline NAME  also store the run, once finished, as\n"
     "                          results/baselines/NAME.json (NAME: 1-100 of\n"
     "                          A-Z a-z 0-9 . _ -, not starting with '.')\n"
     "        --force           let --save-baseline replace that file\n"
     "        --baseline NAME   at the end compare with results/baselines/\n"
     "                          NAME.json as 'compare' does (repeat it for a\n"
     "                          baseline made of several runs); regressions\n"
     "                          make the exit status 1; the comparison is\n"
     "                          printed and written to DIR/compare.json\n"
     "        --allow-missing   baseline cases this run lacks or no longer\n"
     "                          runs do not fail (with --filter, --exclude,\n"
     "                          --backend or --shard only the cases the\n"
     "                          run planned are compared anyway)\n"
     "        --max-mde PCT     fail when a case cannot be judged at PCT\n"
     "                          (as compare --max-mde)\n"
     "        --peaks           measure machine peaks first (a few s) and\n"
     "                          cache them (see peak); without it, cached\n"
     "                          peaks are used when present\n"
     "        --no-isolate      run the cases in this process (debugging);\n"
     "                          by default each case runs in a worker process,\n"
     "                          so a crash, a signal that kills the worker or\n"
     "                          a hang (measure.timeout_s) is recorded as\n"
     "                          status crashed or timeout\n"
     "        --no-nvtx         emit no NVTX ranges (by default the run,\n"
     "                          each case and its phases are ranges in the\n"
     "                          NVTX domain 'tbench', for Nsight Systems)\n"
     "        --plugin PATH[:LABEL]  load a backend plugin (a shared object\n"
     "                          built against tbench/plugin.h,\n"
     "                          docs/PLUGINS.md); LABEL names its backend\n"
     "                          (two builds of one plugin side by side);\n"
     "                          repeatable; also for list and exec; a\n"
     "                          PATH that does not exist is a usage error\n"
     "                          $TBENCH_PLUGIN_PATH: ':'-separated plugin\n"
     "                          files and folders (their *.so; absolute\n"
     "                          paths, folders not writable by all), loaded\n"
     "                          first\n"
     "        --shard I/N       run only shard I of N (1 <= I <= N): a\n"
     "                          deterministic slice of the plan balanced by\n"
     "                          estimated cost (docs/CONFIG.md, Shards);\n"
     "                          join the N result files with merge\n",
     tb_cmd_run, &tb_opts_run},
    {"list", "[--json] [--plugin PATH[:LABEL]]...",
     "ops (arity, dtypes, parameters) and backends (availability with\n"
     "    reason, parameter axes), plugins included\n",
     tb_cmd_list, &tb_opts_list},
    {"exec", "OP (--shape S | --input FILE...) -o DIR [options]",
     "compute OP once on run's deterministic inputs (or on .npy files) and\n"
     "    write every input, output and f64 reference output as NumPy .npy\n"
     "    files + exec.json\n"
     "    -s, --shape S         e.g. 256x256 (all inputs) or 64x128,128x32;\n"
     "                          a creation op (zeros...): the output's shape\n"
     "    -i, --input FILE      a .npy array (float32, float64, float16 or\n"
     "                          bf16 as docs/FORMAT.md says) for the next\n"
     "                          input, once per input, in order (shapes and\n"
     "                          dtype then come from the files)\n"
     "    -p, --params K=V,...  e.g. axis=0,keepdim=true\n"
     "    -d, --dtype DT        f32, f64, bf16 or f16 (default f32, or the\n"
     "                          --input files' dtype)\n"
     "    -b, --backend NAME    (default cpu, default axis values)\n"
     "        --plugin PATH[:LABEL]  load a plugin (see run)\n"
     "        --seed N          config seed, as in a run (default 42)\n"
     "    -o, --output DIR      where the files go (required; written to\n"
     "                          DIR.tmp-XXXXXX and moved in at the end, so a\n"
     "                          failure leaves no partial DIR)\n"
     "    exit 0 ok, 1 failed its check (files still written) or the\n"
     "    kernel failed on these inputs (e.g. did not converge), 2 bad input\n",
     tb_cmd_exec, &tb_opts_exec},
    {"peak", "[--json] [-o FILE] [--quick]",
     "measure memory bandwidth (copy/add/triad/read/update at L1, L2,\n"
     "    L3 and DRAM working sets, 1..N threads; the widest SIMD\n"
     "    level's loops and the one's below it, the faster each), FMA\n"
     "    FLOP/s per ISA\n"
     "    (and at avx512bf16 bf16 and int8 dot-product rates: vdpbf16ps\n"
     "    and vpdpbusd, 2 per multiply-add, the roofs of bf16 matmul and\n"
     "    matmul_int8), the core clock (a chain of dependent adds, 1\n"
     "    thread), and with\n"
     "    a GPU its device memory bandwidth (copy/read/triad) and FMA\n"
     "    FLOP/s (f32, f64) beside the vendor figures (without one it\n"
     "    says why cuda is unavailable); cache them in\n"
     "    $TBENCH_PEAK_CACHE, else ~/.cache/tbench/peak-cache.json\n"
     "    ($XDG_CACHE_HOME/tbench/ when set), which run reads for every\n"
     "    case's roofline fraction (GPU cases: against the GPU's)\n"
     "        --json            print JSON instead of the table\n"
     "    -o, --output FILE     also write the JSON to FILE\n"
     "        --quick           3 short repetitions instead of 7, DRAM set\n"
     "                          4x L3 instead of 8x: a few seconds, most of\n"
     "                          it touching the DRAM set's pages (whose size\n"
     "                          follows the L3 the CPU reports)\n",
     tb_cmd_peak, &tb_opts_peak},
    {"plot", "RESULTS... -o DIR [options]",
     "gnuplot charts (NAME.gp + NAME.dat, rendered to PNG/SVG) of result\n"
     "    files: time and throughput vs size per op (M x N x K for\n"
     "    matmul; bars for an op measured at one size), speedup over the\n"
     "    reference backend, a roofline per backend with measured peaks,\n"
     "    noisiest cases; several files of one matrix\n"
     "    (oldest first) also give history charts with the change points\n"
     "    of `tbench history`\n"
     "    -o, --output DIR      write the charts into DIR (created; all or\n"
     "                          nothing, as exec -o)\n"
     "    -b, --baseline FILE   add the change-vs-baseline chart (coloured\n"
     "                          by compare's verdicts)\n"
     "    -w, --with FILE       draw FILE's cases too (e.g. NumPy); repeatable\n"
     "        --format LIST     png, svg or png,svg (default png,svg)\n"
     "        --noisy N         cases in the noise chart (default 8)\n"
     "        --threshold PCT   the baseline verdicts' compare --threshold\n"
     "                          (default 2)\n"
     "        --no-render       write scripts and data only\n"
     "    gnuplot: $TBENCH_GNUPLOT, else gnuplot on PATH; when missing the\n"
     "    scripts are kept and the exit status is 0\n",
     tb_cmd_plot, &tb_opts_plot},
    {"report", "RESULTS -o FILE.md [options]",
     "Markdown performance report (docs/PERFORMANCE.md) with PNG charts\n"
     "    in a folder next to it; every number comes from the files\n"
     "    -o, --output FILE     the report (its folder is created)\n"
     "        --html            FILE is one self-contained web page instead:\n"
     "                          the same sections, charts inline as SVG,\n"
     "                          sortable tables, a filter box, per-case\n"
     "                          details (samples histogram, CI, counters);\n"
     "                          needs a build with cmark-gfm (exit 2 without)\n"
     "        --append-md FILE  Markdown added at the end (make_report.sh's\n"
     "                          GPU section)\n"
     "    -b, --baseline FILE   add the comparison with a baseline run\n"
     "    -w, --with FILE       side by side: e.g. scripts/compare_numpy.py's\n"
     "                          result file; repeatable\n"
     "        --charts DIR      chart folder, relative to the report's\n"
     "                          folder (default perf; not with --html)\n"
     "        --no-charts       no charts\n"
     "        --generated-by TEXT  name the script that ran this command\n"
     "        --noisy N         rows in the noisiest-cases table (default 8)\n"
     "        --threshold PCT   the baseline verdicts' compare --threshold\n"
     "                          (default 2)\n"
     "    the baseline section's verdicts are `tbench compare BASELINE\n"
     "    RESULTS`'s\n",
     tb_cmd_report, &tb_opts_report},
    {"compare", "OLD NEW [options]  |  OLD... --vs NEW... [options]",
     "compare result files (FILE, or a run folder with results.json) case\n"
     "    by case, joined by id: old and new median, change with a 95%\n"
     "    bootstrap CI of the ratio of medians, two-sided Mann-Whitney p on\n"
     "    the raw samples.  Four verdicts: regressed/improved only when the\n"
     "    change is beyond the noise floor, p < alpha and the CI excludes 0;\n"
     "    unchanged only when the whole CI lies inside +-threshold and the\n"
     "    floor's noise (the MDE, column floor) is at most the threshold\n"
     "    (an equivalence test); inconclusive otherwise.  floor =\n"
     "    max(threshold, within-run noise (ci_rel old + ci_rel new)/2,\n"
     "    between-run noise: with 2+ runs on a side, the smallest change a\n"
     "    t test on the log run medians finds significant at alpha; a side\n"
     "    of one run measured in rounds (measure.rounds) contributes its\n"
     "    round medians instead).  One run per side cannot show noise that\n"
     "    lasts longer than a run: on a noisy machine compare several runs\n"
     "    per side, old and new alternated.  Kernel\n"
     "    launches and allocations per iteration that grow are counter\n"
     "    regressions, and so are CUPTI's launches, memcpys, memsets and\n"
     "    device allocs when both sides measured them (no verdict, and\n"
     "    why, when one did not); a case that stops running or newly\n"
     "    fails is a status failure; a case of OLD absent from NEW, or that\n"
     "    ran and no longer runs (unsupported...), is missing and fails\n"
     "        --vs              files before it: old runs; after it: new runs\n"
     "        --threshold PCT   smallest change that can count (default 2)\n"
     "        --instr-threshold PCT  instructions per iteration (run with\n"
     "                          measure.instructions) that change by more\n"
     "                          are a counter regression or improvement\n"
     "                          (default 0.1)\n"
     "        --cache-threshold PCT  L1D, LL and dTLB misses per iteration\n"
     "                          (run with measure.cache) that change by\n"
     "                          more, and by at least 1 per iteration, are\n"
     "                          a counter regression or improvement\n"
     "                          (default 1)\n"
     "        --alpha A         significance level per case (default 0.01;\n"
     "                          divide by the number of cases to bound the\n"
     "                          chance of any false alarm in a comparison)\n"
     "        --fail-on LIST    kinds that fail: time,counters,status\n"
     "                          (default all three) or none\n"
     "        --max-mde PCT     fail (exit 1) when a case timed on both\n"
     "                          sides cannot be judged at PCT: its MDE\n"
     "                          (the noise part of the floor) is larger\n"
     "        --allow-missing   missing cases do not fail\n"
     "        --format F        text (default), md or json (docs/FORMAT.md)\n"
     "        --backends OLD,NEW  old side: only backend OLD's cases, new\n"
     "                          side: only NEW's, joined with the backend\n"
     "                          name in the id replaced by '*' (e.g. two\n"
     "                          labels of one plugin: compare RUN RUN\n"
     "                          --backends v1,v2)\n"
     "    -o, --output FILE     write to FILE instead of stdout\n"
     "    summary: N regressed, N improved, N unchanged, N inconclusive,\n"
     "    N missing\n"
     "    exit 0 no regression of a --fail-on kind (improvements and\n"
     "    inconclusive cases never fail), 1 regressions, missing cases or\n"
     "    cases beyond --max-mde found, 2 usage or input error (unreadable,\n"
     "    corrupt, truncated or wrong-schema file, no case id in common)\n",
     tb_cmd_compare, &tb_opts_compare},
    {"history", "FILE... [options]",
     "per case the medians over runs of one matrix (oldest first) and the\n"
     "    runs where a step happened: penalized piecewise-constant fit of the\n"
     "    log medians, each step kept only when compare's verdict on the\n"
     "    runs before against the runs after is regressed or improved (on\n"
     "    two files: exactly compare's verdicts; docs/FORMAT.md)\n"
     "        --threshold PCT   smallest step reported (default 2)\n"
     "        --alpha A         the steps' significance level (default 0.01)\n"
     "        --penalty F       cost of a step in noise variances (default 4)\n"
     "        --format F        text (default), md or json (chart data)\n"
     "    -o, --output FILE     write to FILE instead of stdout\n"
     "    exit 0 ok, 2 usage or input error\n",
     tb_cmd_history, &tb_opts_history},
    {"export", "FILE --format gbench|bmf|gab [-o FILE]",
     "convert a result file for CI dashboards: gbench (Google Benchmark\n"
     "    JSON), bmf (Bencher Metric Format), gab (github-action-benchmark\n"
     "    customSmallerIsBetter); docs/FORMAT.md\n"
     "        --format F        gbench, bmf or gab (required)\n"
     "    -o, --output FILE     write to FILE instead of stdout\n"
     "    exit 0 ok, 2 usage or input error\n",
     tb_cmd_export, &tb_opts_export},
    {"targets", "RESULTS -t FILE [--with PEER]... [options]",
     "hold the cases of a result file (FILE, or a run folder) to the\n"
     "    performance targets of a targets file (docs/CONFIG.md, Targets\n"
     "    files): per case or op a time budget (max_time), a ratio to a\n"
     "    peer's time (max_ratio_to: the fastest case of backend PEER, e.g.\n"
     "    numpy or torch, with the same op, params, shapes and dtype in a\n"
     "    --with file, at the same thread count) or a ratio to the case's\n"
     "    roofline bound (max_bound_ratio).  A check is met when the upper\n"
     "    end of the quantity's 95% CI is at or below the limit, missed\n"
     "    when its lower end is above it, inconclusive otherwise (CIs: the\n"
     "    median's as recorded; a peer ratio's by compare's pair test); a\n"
     "    case or peer that did not run, or a case without a bound, is\n"
     "    missing\n"
     "    -t, --targets FILE    the targets file (required)\n"
     "    -w, --with PEER       a result file of the peers (e.g.\n"
     "                          scripts/compare_numpy.py's); repeatable\n"
     "        --strict          inconclusive checks fail too\n"
     "        --allow-missing   missing checks do not fail\n"
     "        --format F        text (default: a table, then the summary)\n"
     "                          or json (tbench.targets/1, docs/FORMAT.md)\n"
     "    summary: N met, N missed, N inconclusive, N missing, N unmatched\n"
     "    exit 0 every check met or inconclusive, 1 a check missed, a\n"
     "    target matched no case, a check missing (unless --allow-missing)\n"
     "    or inconclusive (with --strict), 2 usage or input error (a bad\n"
     "    targets file: FILE:LINE:COL: what)\n",
     tb_cmd_targets, &tb_opts_targets},
    {"show", "CASE [RESULTS] [--json]",
     "everything a result file records about the cases whose id matches\n"
     "    CASE (as run --filter matches: an id as printed, or a glob):\n"
     "    status, check, statistics, counters, roofline and the CUPTI\n"
     "    counts per iteration with the kernel breakdown (or why they were\n"
     "    not measured); for a model step, its per-op breakdown: op,\n"
     "    kernel, phase, calls, ms and share per step, and the gap to the\n"
     "    step.  RESULTS: a file or run folder (default: the newest run\n"
     "    under results/)\n"
     "        --json            the records as stored\n"
     "    exit 0 ok, 2 usage or input error (no case matches)\n",
     tb_cmd_show, &tb_opts_show},
    {"selftest", "[--quick] [--json] [-o FILE] [options]",
     "how accurately the harness measures on this machine, and the\n"
     "    smallest change it can detect here: the clock's resolution and\n"
     "    cost; calib_spin at 100 ns, 1 us, 10 us and 1 ms through the\n"
     "    runner (measured vs true, and the error the clock allows);\n"
     "    calib_work in rounds: the CV of the round medians and the\n"
     "    minimum detectable effect MDE(m) = (z(1-alpha/2) + z(power)) *\n"
     "    CV * sqrt(2/m) for m = 1 and 5 runs per side (docs/FORMAT.md);\n"
     "    and the noise sources it sees: the core clock before each round,\n"
     "    load average, steal and other processes' CPU time meanwhile\n"
     "        --quick           5 rounds, 0.2 s per spin case (about 3 s)\n"
     "        --runs N          rounds of calib_work, 3..64 (default 10)\n"
     "        --work N          calib_work's size [N] (default 100000)\n"
     "        --alpha A         two-sided level (default 0.01, compare's)\n"
     "        --power P         detection probability (default 0.8)\n"
     "        --json            print JSON (tbench.selftest/1)\n"
     "    -o, --output FILE     also write the JSON to FILE\n"
     "    exit 0 ok, 1 a calibration case did not run, 2 usage error\n",
     tb_cmd_selftest, &tb_opts_selftest},
    {"merge", "SHARD... -o OUT [--allow-mixed-hosts] [--plugin P]...",
     "join the result files (FILE, or a run folder) of the N shards of\n"
     "    one sharded run (run's shard option) into one result file, cases\n"
     "    in plan order, each recording its host and shard.  Builds the\n"
     "    plan again from the configs and the --filter/--exclude/--backend\n"
     "    the shards record (give it the shards' --plugin options) and\n"
     "    refuses shards whose plan it is not, that ran another config\n"
     "    text, tbench commit or build, a shard given twice or missing, a\n"
     "    shard that did not finish or misses cases, a case recorded\n"
     "    twice, and shards from different machines\n"
     "    -o, --output OUT      the merged file (written atomically); a\n"
     "                          folder: OUT/results.json\n"
     "        --allow-mixed-hosts  accept shards run on different machines\n"
     "                          (hostname or CPU model)\n"
     "    exit 0 ok, 2 usage or input error (nothing written)\n",
     tb_cmd_merge, &tb_opts_merge},
    {"profile", "CASE-ID CONFIG... [--with TOOL] [--seconds S] [-o DIR]",
     "run one case of the configs, in process, for about S seconds under a\n"
     "    profiler, and say where its output is and how to open it\n"
     "        --with TOOL       perf (default: perf record -g; a\n"
     "                          flamegraph.svg when FlameGraph's scripts or\n"
     "                          inferno are on PATH, else perf-report.txt),\n"
     "                          callgrind (collected only around the calls;\n"
     "                          kcachegrind, callgrind_annotate), massif\n"
     "                          (the heap; ms_print), nsys or ncu (a GPU\n"
     "                          case)\n"
     "        --seconds S       how long the case runs (default 5)\n"
     "    -o, --output DIR      where the files go (default ./profile)\n"
     "    -b, --backend NAME    the backend of the case, when the configs\n"
     "                          do not list it\n"
     "    exit 0 ok, 1 the case failed, 2 usage error, the case is not in\n"
     "    the configs, or the tool is missing or refused (one line, with\n"
     "    its log)\n",
     tb_cmd_profile, &tb_opts_profile},
    {"ab", "OLD NEW CONFIG [options]",
     "paired A/B of two tbench executables (e.g. the base branch's and a\n"
     "    pull request's build) on CONFIG's cases.  Each build serves in its\n"
     "    own worker process, a fresh one every block (exec'd as 'EXE worker\n"
     "    --protocol 1 --fd N'; a build that does not speak protocol 1 is\n"
     "    refused, exit 2).  In each of N blocks the cases come in a new\n"
     "    random order and the two builds measure a round of each case in\n"
     "    random order (RMIT); per case, the block ratios new/old are\n"
     "    judged: change = median ratio - 1 with a 95% bootstrap CI,\n"
     "    Wilcoxon signed-rank p adjusted over the cases (Holm), and the\n"
     "    minimum detectable effect (MDE) of the case on this machine now.\n"
     "    regressed/improved when p(Holm) < alpha, |change| > threshold and\n"
     "    the CI excludes 0; unchanged only when the CI lies inside\n"
     "    +-threshold and the MDE is at most the threshold; inconclusive\n"
     "    otherwise (e.g. MDE none: too few blocks).  CONFIG's\n"
     "    measure.rounds is replaced by N\n"
     "    (docs/FORMAT.md, ab)\n"
     "        --blocks N        blocks per case, 6-64 (default 20; 12+ for\n"
     "                          the exact test to reach alpha/cases)\n"
     "        --duet            run both builds at once, pinned to CPUs 0\n"
     "                          and 1, swapping places every block\n"
     "        --alpha A         family-wise level over the cases (default\n"
     "                          0.05)\n"
     "        --threshold PCT   smallest change that can count (default 0.5)\n"
     "        --max-mde PCT     exit 1 when a case's MDE is above PCT (it\n"
     "                          cannot be judged at that resolution)\n"
     "        --seed S          seed of the order and the bootstrap\n"
     "        --estimator E     a block's value: min (default: its fastest\n"
     "                          sample, robust to preemption) or median\n"
     "        --target-mde PCT  sequential: after --blocks, look again at\n"
     "                          1.5x the blocks each time; a case stops\n"
     "                          when its MDE is at most PCT or a change is\n"
     "                          called (look k spends alpha/(k(k+1)))\n"
     "        --budget D        sequential: end at the look where the next\n"
     "                          block would pass D (90, 90s, 15m, 1.5h);\n"
     "                          open cases keep the MDE reached\n"
     "        --max-blocks N    sequential: blocks at most (default 400)\n"
     "    -f, --filter GLOB     only cases whose id matches (as run)\n"
     "    -x, --exclude GLOB    leave out cases whose id matches (as run)\n"
     "    -o, --output DIR      write DIR/ab.json (verdicts and block\n"
     "                          values) and each build's own results of\n"
     "                          each block, DIR/old|new/block-NN/results.json\n"
     "    -q, --quiet           no progress and no build lines\n"
     "        --format F        what stdout gets: text (default: the table,\n"
     "                          coloured on a terminal), md (Markdown for a\n"
     "                          pull request or $GITHUB_STEP_SUMMARY) or\n"
     "                          json (ab.json's document)\n"
     "    exit 0 no regression, 1 a case regressed or failed on a side (or\n"
     "    is beyond --max-mde), 2 usage or input error (bad config,\n"
     "    refused build), 3 stopped early by a worker or a write that\n"
     "    failed (the blocks so far are judged; no verdict of the change)\n",
     tb_cmd_ab, &tb_opts_ab},
    {"worker", "--protocol V --fd N",
     "internal: the worker that 'ab' starts in each build; serves protocol\n"
     "    V (this build: 1) on socket N (src/harness/xworker.h)\n",
     tb_cmd_worker, NULL},
};

void tb_cmd_usage(FILE *f, const char *cmd)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name)) {
            fprintf(f, "usage: tbench %s %s\n\n    %s", commands[i].name,
                    commands[i].synopsis, commands[i].help);
            fputs("\nexit status: 0 success, 1 see above, 2 usage or input "
                  "error, 128+N stopped by signal N\n"
                  "(every command: 'tbench --help'; docs: README.md, "
                  "docs/CONFIG.md, docs/FORMAT.md)\n", f);
            return;
        }
    tb_usage(f);
}

/* `tbench` alone: a line per command (the first of its help), then
 * where the rest is.  The internal worker command is not listed. */
static void tb_overview(FILE *f)
{
    static const char *const brief[][2] = {
        {"run", "measure every case of a config (or one --op)"},
        {"list", "the ops, and the backends of this machine"},
        {"exec", "compute one op once, inputs and output as .npy"},
        {"peak", "this machine's bandwidth and FLOP/s roofs"},
        {"plot", "gnuplot charts of result files"},
        {"report", "a Markdown (or --html) report of result files"},
        {"compare", "old against new, case by case, with verdicts"},
        {"history", "medians over many runs, and where they stepped"},
        {"export", "a result file for CI dashboards (gbench, bmf, gab)"},
        {"targets", "hold a result file to performance targets"},
        {"show", "everything recorded about some cases"},
        {"selftest", "the harness's accuracy and noise on this machine"},
        {"merge", "join the shards of one run"},
        {"ab", "paired A/B of two tbench builds"},
        {"profile", "one case under perf, callgrind, massif, nsys or ncu"},
    };
    fputs("usage: tbench <command> [options]   (tbench --help: everything)"
          "\n\n", f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const char *h = commands[i].help, *b = NULL;
        if (!strcmp(commands[i].name, "worker"))
            continue; /* internal: ab's */
        for (size_t k = 0; k < sizeof brief / sizeof brief[0]; k++)
            if (!strcmp(brief[k][0], commands[i].name))
                b = brief[k][1];
        fprintf(f, "  %-9s %.*s\n", commands[i].name,
                b ? (int)strlen(b) : (int)strcspn(h, "\n"), b ? b : h);
    }
    fputs("\nstart with: tbench run configs/quick.json; then tbench report "
          "results/<run>\noptions of one command: tbench help COMMAND\n",
          f);
}

void tb_usage(FILE *f)
{
    fputs("usage: tbench <command> [options]\n\n"
          "Benchmark tensor operations on every backend of this machine.\n"
          "\ncommands:\n", f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s %s\n    %s", commands[i].name, commands[i].synopsis,
                commands[i].help);
    fputs("  help [COMMAND]\n    this text, or the help of one command "
          "(also: tbench COMMAND --help)\n"
          "\noptions:\n"
          "  -h, --help                this text\n"
          "  -V, --version             version and git commit\n"
          "\nexit status:\n"
          "  0    success (run: every case ran, ok/unsupported/unavailable)\n"
          "  1    run: a case failed its correctness check, hit an error,\n"
          "       crashed or timed out,\n"
          "       or a --baseline comparison found a regression;\n"
          "       compare: a regression (see compare above)\n"
          "       targets: a target missed (see targets above)\n"
          "  2    usage or input error: nothing was run, no result was written\n"
          "  129, 130, 143  run stopped by SIGHUP, SIGINT or SIGTERM: the\n"
          "       cases finished so far are in the results (a signal that\n"
          "       kills a worker process alone crashes its case: exit 1)\n"
          "\nConfig format: docs/CONFIG.md.  Result format: docs/FORMAT.md.\n",
          f);
}

/* ---- __options: the declared options, for the completions ------------ */

/* What an option's value is, where the shell can offer values: a kind
 * the completion knows (case: the ids of the config on the command
 * line; file; backend; dtype; op) or the words it takes.  Options not
 * listed take a value nothing can guess (a number, a name). */
static const struct {
    const char *cmd; /* NULL: every command */
    const char *opt, *value;
} option_values[] = {
    {NULL, "filter", "case"},
    {NULL, "exclude", "case"},
    {NULL, "backend", "backend"},
    {NULL, "dtype", "dtype"},
    {NULL, "op", "op"},
    {NULL, "output", "file"},
    {NULL, "input", "file"},
    {NULL, "with", "file"},
    {NULL, "targets", "file"},
    {"plot", "baseline", "file"},
    {"report", "baseline", "file"},
    {"report", "append-md", "file"},
    {"compare", "format", "words:" TB_TEXT_FORMATS},
    {"history", "format", "words:" TB_TEXT_FORMATS},
    {"ab", "format", "words:" TB_TEXT_FORMATS},
    {"targets", "format", "words:" TB_TARGETS_FORMATS},
    {"export", "format", "words:" TB_EXPORT_FORMATS},
    {"plot", "format", "words:" TB_CHART_FORMATS " png,svg"},
    {"compare", "fail-on", "words:" TB_FAIL_ON_WORDS},
    {"ab", "estimator", "words:" TB_AB_ESTIMATORS},
};

/* A line per option of every public command: "CMD --LONG -S VALUE" (-S
 * "-" without a short form; VALUE "-" for a flag, else an
 * option_values kind, or "value"), and --plugin for the commands whose
 * plugins main loads.  Exit 0. */
static int print_options(void)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const tb_command *c = &commands[i];
        if (!c->opts)
            continue;
        for (const struct option *o = c->opts->longopts; o->name; o++) {
            if (c->opts->takes && !c->opts->takes(c->name, o->name))
                continue;
            char sh[3] = "-";
            if (o->val > 0 && o->val < 128 && o->val != ':' &&
                o->val != '-' && strchr(c->opts->shorts, o->val))
                snprintf(sh, sizeof sh, "-%c", o->val);
            const char *v = o->has_arg == no_argument ? "-" : "value";
            for (size_t k = 0; o->has_arg != no_argument &&
                               k < sizeof option_values /
                                       sizeof option_values[0];
                 k++)
                if (!strcmp(option_values[k].opt, o->name) &&
                    (!option_values[k].cmd ||
                     !strcmp(option_values[k].cmd, c->name)))
                    v = option_values[k].value;
            printf("%s --%s %s %s\n", c->name, o->name, sh, v);
        }
        if (!strcmp(c->name, "run") || !strcmp(c->name, "list") ||
            !strcmp(c->name, "exec") || !strcmp(c->name, "merge"))
            printf("%s --plugin - file\n", c->name);
    }
    return TB_EXIT_OKAY;
}

/* ---- list ---------------------------------------------------------------- */

/* What `list` says of one backend: b probed (a module's placeholder
 * becomes the module's backend) and, when available, its axes. */
typedef struct listed {
    const tb_backend *be;
    bool ok;
    char reason[256];
    int n_axes;
    tb_axis axes[TB_MAX_AXES];
} listed;

static void list_probe(const tb_backend *b, listed *l)
{
    l->be = b;
    l->reason[0] = '\0';
    l->ok = tb_backend_probe(&l->be, l->reason, sizeof l->reason) == 0;
    l->n_axes = l->ok ? l->be->axes(l->be, l->axes, TB_MAX_AXES) : 0;
}

static const char *param_kind(tb_param_kind k)
{
    return k == TB_PARAM_INT      ? "int"
           : k == TB_PARAM_BOOL   ? "bool"
           : k == TB_PARAM_STRING ? "string"
                                  : "float";
}

static cJSON *list_json(void)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *ops = cJSON_AddArrayToObject(doc, "ops");
    for (int i = 0; i < TB_OP_COUNT; i++) {
        const tb_op *op = tb_op_get((tb_op_id)i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", op->name);
        cJSON_AddStringToObject(o, "category",
                                tb_op_category_name(op->category));
        cJSON_AddNumberToObject(o, "inputs", op->n_in);
        cJSON_AddNumberToObject(o, "outputs", op->n_out);
        /* What a config's shape means: one per input, or (creation ops)
         * the output's. */
        cJSON_AddStringToObject(o, "shapes",
                                op->n_in ? "inputs" : "output");
        cJSON *al = cJSON_AddArrayToObject(o, "in_place");
        for (int k = 0; op->alias && k < op->n_out; k++)
            cJSON_AddItemToArray(al, op->alias[k] >= 0
                                         ? cJSON_CreateNumber(op->alias[k])
                                         : cJSON_CreateNull());
        if (op->base != op->id)
            cJSON_AddStringToObject(o, "form_of", tb_op_get(op->base)->name);
        else
            cJSON_AddNullToObject(o, "form_of");
        cJSON *stj = cJSON_AddArrayToObject(o, "steps");
        for (int k = 0; k < op->n_steps; k++)
            cJSON_AddItemToArray(
                stj, cJSON_CreateString(tb_op_get(op->steps[k].op)->name));
        cJSON *dt = cJSON_AddArrayToObject(o, "dtypes");
        for (int d = 0; d < TB_DTYPE_COUNT; d++)
            if (!tb_op_dtype_reason(op, (tb_dtype)d))
                cJSON_AddItemToArray(dt,
                                     cJSON_CreateString(tb_dtype_name(d)));
        cJSON *ps = cJSON_AddArrayToObject(o, "params");
        for (int p = 0; p < op->n_params; p++) {
            const tb_param_spec *s = &op->params[p];
            cJSON *pj = cJSON_CreateObject();
            cJSON_AddStringToObject(pj, "name", s->name);
            cJSON_AddStringToObject(pj, "type", param_kind(s->kind));
            cJSON_AddBoolToObject(pj, "optional", s->optional);
            if (s->optional)
                cJSON_AddNullToObject(pj, "default");
            else if (s->kind == TB_PARAM_STRING)
                cJSON_AddStringToObject(pj, "default",
                                        op->str_default ? op->str_default
                                                        : "");
            else
                cJSON_AddNumberToObject(pj, "default", s->def);
            /* a string's bounds are its length's */
            cJSON_AddNumberToObject(pj, "min", s->min);
            cJSON_AddNumberToObject(pj, "max", s->max);
            cJSON_AddStringToObject(pj, "doc", s->doc);
            cJSON_AddItemToArray(ps, pj);
        }
        cJSON *tol = cJSON_AddObjectToObject(o, "tolerance");
        for (int d = 0; d < TB_DTYPE_COUNT; d++) {
            cJSON *t = cJSON_AddObjectToObject(tol, tb_dtype_name(d));
            cJSON_AddNumberToObject(t, "rtol", op->tol[d].rtol);
            cJSON_AddNumberToObject(t, "atol", op->tol[d].atol);
        }
        cJSON_AddStringToObject(o, "doc", op->doc);
        cJSON_AddItemToArray(ops, o);
    }
    cJSON *bes = cJSON_AddArrayToObject(doc, "backends");
    int n;
    const tb_backend *const *list = tb_backend_list(&n);
    for (int i = 0; i < n; i++) {
        listed l;
        list_probe(list[i], &l);
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "name", l.be->name);
        cJSON_AddBoolToObject(b, "available", l.ok);
        if (l.ok)
            cJSON_AddNullToObject(b, "reason");
        else
            cJSON_AddStringToObject(b, "reason", l.reason);
        cJSON_AddStringToObject(b, "doc", l.be->doc);
        cJSON *ax = cJSON_AddArrayToObject(b, "axes");
        const tb_axis *axes = l.axes;
        int na = l.n_axes;
        for (int a = 0; a < na; a++) {
            cJSON *aj = cJSON_CreateObject();
            cJSON_AddStringToObject(aj, "name", axes[a].name);
            cJSON *vals = cJSON_AddArrayToObject(aj, "values");
            for (int v = 0; v < axes[a].n_values; v++)
                cJSON_AddItemToArray(vals,
                                     cJSON_CreateString(axes[a].values[v]));
            cJSON_AddStringToObject(aj, "default",
                                    axes[a].values[axes[a].def]);
            cJSON_AddStringToObject(aj, "doc", axes[a].doc ? axes[a].doc
                                                           : "");
            cJSON_AddItemToArray(ax, aj);
        }
        cJSON_AddItemToArray(bes, b);
    }
    return doc;
}

/* `tbench list` as text, from the op table and the backends (each
 * probed, with its axes when available); --json has the same facts. */
static void list_text(void)
{
    printf("ops (all in f32 and f64; +16: also in bf16 and f16):\n");
    for (int i = 0; i < TB_OP_COUNT; i++) {
        const tb_op *op = tb_op_get((tb_op_id)i);
        printf("  %-19s %-11s %-3s %d in  ", op->name,
               tb_op_category_name(op->category),
               tb_op_dtype_reason(op, TB_BF16) ? "" : "+16", op->n_in);
        int first = 1;
        for (int p = 0; p < op->n_params; p++) {
            const tb_param_spec *s = &op->params[p];
            if (s->optional)
                printf("%s%s=(none)", first ? "" : " ", s->name);
            else if (s->kind == TB_PARAM_STRING)
                printf("%s%s=%s", first ? "" : " ", s->name,
                       op->str_default ? op->str_default : "");
            else
                printf("%s%s=%g", first ? "" : " ", s->name, s->def);
            first = 0;
        }
        printf("%s  %s\n", first ? "-" : "", op->doc);
    }
    printf("\nbackends:\n");
    int n;
    const tb_backend *const *list = tb_backend_list(&n);
    for (int i = 0; i < n; i++) {
        listed l;
        list_probe(list[i], &l);
        printf("  %-8s %s", l.be->name,
               l.ok ? "available" : "unavailable: ");
        if (!l.ok)
            printf("%s", l.reason);
        printf("\n");
        printf("           %s\n", l.be->doc);
        const tb_axis *axes = l.axes;
        int na = l.n_axes;
        for (int a = 0; a < na; a++) {
            printf("           axis %s:", axes[a].name);
            for (int v = 0; v < axes[a].n_values; v++)
                printf(" %s", axes[a].values[v]);
            printf("  (default %s)\n", axes[a].values[axes[a].def]);
        }
    }
}

static const struct option list_longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_list = {list_longopts, ":h", NULL};

int tb_cmd_list(int argc, char **argv)
{
    const struct option *longopts = list_longopts;
    bool json = false;
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_list, &first)) !=
           -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': tb_cmd_usage(stdout, "list"); return TB_EXIT_OKAY;
        default: return tb_opt_error("list", c, argv, longopts);
        }
    }
    if (optind < argc)
        return tb_usage_error("list: unexpected argument '%s'", argv[optind]);
    if (!json) {
        list_text();
        return TB_EXIT_OKAY;
    }
    cJSON *doc = list_json();
    char *s = cJSON_Print(doc);
    puts(s);
    free(s);
    cJSON_Delete(doc);
    return TB_EXIT_OKAY;
}

/* Plugins for run, list, exec and merge (which builds the shards' plan
 * again): TBENCH_PLUGIN_PATH's, then each
 * --plugin PATH[:LABEL] (or --plugin=...) in order; the options are
 * taken out of argv.  Returns 0 or TB_EXIT_USAGE after the message. */
static int load_plugins(int *argc, char **argv)
{
    char err[1024];
    if (tb_plugin_add_path(getenv("TBENCH_PLUGIN_PATH"), err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_USAGE;
    }
    int k = 2;
    for (int i = 2; i < *argc; i++) {
        const char *spec = NULL;
        if (!strcmp(argv[i], "--plugin")) {
            if (i + 1 == *argc)
                return tb_usage_error("%s: --plugin needs PATH[:LABEL]",
                                      argv[1]);
            spec = argv[++i];
        } else if (!strncmp(argv[i], "--plugin=", 9)) {
            spec = argv[i] + 9;
        } else {
            argv[k++] = argv[i];
            continue;
        }
        if (tb_plugin_add(spec, err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            return TB_EXIT_USAGE;
        }
    }
    argv[k] = NULL;
    *argc = k;
    return 0;
}

int main(int argc, char **argv)
{
    /* Past RLIMIT_FSIZE a write fails with EFBIG, which every writer
     * reports and cleans up after, instead of SIGXFSZ killing tbench
     * with its temporary file left behind (exec'd workers inherit it). */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        tb_overview(stderr);
        return TB_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    size_t ncmd = sizeof commands / sizeof commands[0];
    if (!strcmp(cmd, "help") && argc > 2) {
        for (size_t i = 0; i < ncmd; i++)
            if (!strcmp(argv[2], commands[i].name)) {
                tb_cmd_usage(stdout, argv[2]);
                return TB_EXIT_OKAY;
            }
        cmd = argv[2]; /* an unknown command: said below */
    } else if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") ||
               !strcmp(cmd, "help")) {
        tb_usage(stdout);
        return TB_EXIT_OKAY;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        /* a sanitized build says so (tests that measure memory skip) */
        printf("tbench %s (commit %s, %s build%s%s)\n", TB_VERSION,
               TB_GIT_COMMIT, TB_BUILD_TYPE,
               TB_SANITIZED ? ", sanitizers " : "",
               TB_SANITIZED ? TB_SANITIZE : "");
        return TB_EXIT_OKAY;
    }
    if (!strcmp(cmd, "__instr-count")) /* run's counting process */
        return tb_cmd_instr_count(argc - 1, argv + 1);
    if (!strcmp(cmd, "__profile-run")) /* profile's case, under the tool */
        return tb_cmd_profile_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "__options")) /* for scripts/gen_cli_docs.py */
        return print_options();
    const char *names[sizeof commands / sizeof commands[0] + 1];
    for (size_t i = 0; i < ncmd; i++) {
        if (!strcmp(cmd, commands[i].name) && cmd == argv[1]) {
            if (!strcmp(cmd, "run") || !strcmp(cmd, "list") ||
                !strcmp(cmd, "exec") || !strcmp(cmd, "merge")) {
                int rc = load_plugins(&argc, argv);
                if (rc)
                    return rc;
            }
            return commands[i].fn(argc - 1, argv + 1);
        }
        names[i] = commands[i].name;
    }
    names[ncmd] = "help";
    const char *near = tb_closest(cmd, names, (int)ncmd + 1);
    if (near) {
        fprintf(stderr, "tbench: unknown command '%s'; did you mean '%s'?\n"
                "Try 'tbench --help'.\n", cmd, near);
        return TB_EXIT_USAGE;
    }
    return tb_usage_error("unknown command '%s'", cmd);
}
