#!/bin/sh
# Install the Debian 12 packages tbench uses, from the one list below.
#
#   sh scripts/setup.sh           the "main" set: what tbench needs to
#                                 build and run (README's first command)
#   sh scripts/setup.sh --tests   the main set and the "tests" set: what
#                                 the test suite and every script in
#                                 scripts/ use, PyTorch included (README's
#                                 second command, .ci/run)
#   sh scripts/setup.sh --list [--tests]   print the set's packages, one a
#                                 line, and install nothing
#
# Idempotent: when everything is present it changes nothing and does not
# touch the network; otherwise it runs apt-get update, then installs only
# what is missing (--no-install-recommends).  Needs root (or sudo).
#
# Every Debian package a script, test, README command or the C code uses
# goes into this list: tests/test_setup_deps.py (the setup-deps test)
# fails naming any Python module, external command or header whose
# package the list does not install.
set -eu

# set    package             what uses it
PACKAGES='
main   gcc                 the build (C11)
main   libc6-dev           the build
main   pkg-config          the build; examples/plugins Makefiles
main   meson               the build
main   ninja-build         the build
main   git                 compare_numpy.py (git describe); cloning
main   libcjson-dev        config and result files (required)
main   libcsv-dev          CSV output (required)
main   libopenblas-dev     the blas backend
main   liblapacke-dev      the blas backend (linalg ops)
main   gnuplot-nox         tbench report/plot charts (src/report/plot.c)
main   libcmark-gfm-dev    tbench report --html: Markdown to HTML (src/report/html.c)
main   libcmark-gfm-extensions-dev  tbench report --html: GFM tables
main   valgrind            measure.instructions = callgrind (src/harness/instr.c); tbench profile
main   linux-perf          tbench profile --with perf (perf record; src/cli/cmd_profile.c)
tests  libcmocka-dev       the C unit tests
tests  python3             the Python tests and scripts (/usr/bin/python3)
tests  python3-jsonschema  result-file schema checks (tests, soak.sh)
tests  python3-numpy       compare_numpy.py, oracle generators, tests
tests  python3-scipy       oracle generators, tests
tests  python3-mpmath      oracle and table generators (test_tables.py)
tests  python3-torch       compare_torch_training.py, compare_numpy.py (PyTorch half), oracles
tests  make                tests/test_cli_plugin.py builds examples/plugins
tests  chromium            tests/test_cli_html.py (headless browser), the make_report.sh screenshot
tests  libblis-dev         examples/plugins/blis
tests  libbenchmark-tools  compare.py (test_cli_compare.py, proof_ab.sh)
tests  clang               tests/fuzz (libFuzzer), scripts/test.sh
tests  libclang-rt-14-dev  tests/fuzz (libFuzzer runtime)
tests  llvm                llvm-mca (scripts/kernel_bounds.py, the icelake-server model of LLVM 14)
tests  llvm-19             llvm-mca-19 (scripts/kernel_bounds.py --mcpu znver4: LLVM 14 has no Zen 4 model)
tests  slurmctld           scripts/slurm (tests/test_slurm.py)
tests  slurmd              scripts/slurm (tests/test_slurm.py)
tests  slurm-client        sbatch, sinfo (scripts/slurm)
tests  munge               munged (tests/test_slurm.py)
tests  procps              pgrep (scripts/soak.sh)
tests  bc                  scripts/soak.sh
tests  debootstrap         scripts/fresh_check.sh
tests  universal-ctags     function lengths (scripts/house_metrics.py)
tests  time                /usr/bin/time: wall time and peak RSS (scripts/scale_bench.sh)
tests  python3-venv        scripts/peers.sh (PyPI NumPy, PyTorch and MKL in a virtual environment)
'

want_tests=0
list_only=0
for arg in "$@"; do
    case $arg in
    --tests) want_tests=1 ;;
    --list) list_only=1 ;;
    *) echo "setup.sh: unknown option '$arg' (--tests, --list)" >&2
       exit 2 ;;
    esac
done

PKGS=$(printf '%s\n' "$PACKAGES" | while read -r tier pkg _; do
    case $tier in
    main) echo "$pkg" ;;
    tests) [ "$want_tests" -eq 0 ] || echo "$pkg" ;;
    esac
done)

if [ "$list_only" -eq 1 ]; then
    printf '%s\n' "$PKGS"
    exit 0
fi

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
        grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "setup: all packages present"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
fi
echo "setup: installing$missing"
$SUDO apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is wanted
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y \
    --no-install-recommends $missing
