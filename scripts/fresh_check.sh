#!/bin/sh
# Prove README's two commands on a clean root file system (issue 25): a
# Debian 12 (bookworm, minbase: only the Essential and required packages
# and apt) root made by debootstrap from the Debian mirror, with
# bookworm-updates and the security suite in its sources as on an
# installed machine; the project cloned into it (git clone of this
# repository's HEAD, which is what CI checks out); then the two commands
# of README.md's first code block, read from README.md itself, run inside
# with chroot, as root, in a clean environment (no host PATH, no CUDA
# toolkit).  It passes when both exit 0 and the second one's last
# "N passed, N failed" line says 0 failed.
#
# A benchmark-length job (tens of minutes on 2 cores, most of it the test
# suite), not a CI test.  Run it on a quiet machine:
#
#   sudo sh scripts/fresh_check.sh [DIR]
#
#   DIR        where it works (default build-fresh, ignored by git):
#              DIR/root the new root (emptied first), DIR/*.log the output
#              of each step.  DIR/root is removed at the end when the
#              check passed and KEEP is unset; a failed one keeps it
#              (look inside with `sudo chroot DIR/root`).
#   MIRROR     the Debian mirror (default http://deb.debian.org/debian)
#   SECURITY   the security mirror (default
#              http://deb.debian.org/debian-security)
#   KEEP=1     keep DIR/root after a pass too
#
# Prints the wall time of each step.  Exit status: 0 passed; 1 a README
# command failed, or the count line is missing or counts a failure; 2 it
# could not start (not root, no debootstrap, no git checkout,
# debootstrap failed).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$here/build-fresh}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY=${SECURITY:-http://deb.debian.org/debian-security}

die() { echo "fresh_check: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mount, chroot)"
command -v debootstrap >/dev/null ||
    die "debootstrap not found (apt-get install debootstrap)"
git -C "$here" rev-parse -q --verify HEAD >/dev/null ||
    die "$here is not a git checkout"
if [ -n "$(git -C "$here" status --porcelain --untracked-files=no)" ]; then
    echo "fresh_check: note: uncommitted changes are not checked" \
        "(the root gets a clone of HEAD)" >&2
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
root=$dir/root

# The file systems mounted under $root, innermost last (unmounted in
# reverse order, each with what was mounted under it).
MOUNTS="proc sys dev dev/pts dev/shm"

mounted_under() { # what of /proc/mounts lies under $root
    while read -r _ mp _; do
        case $mp in "$root"|"$root"/*) echo "$mp" ;; esac
    done < /proc/mounts
}

cleanup() {
    # Processes still running in the root (a daemon a test left behind)
    # would keep its mounts busy: end them by their ids.
    for p in /proc/[0-9]*; do
        if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ]; then
            kill -9 "${p#/proc/}" 2>/dev/null || true
        fi
    done
    rev=""
    for m in $MOUNTS; do rev="$m $rev"; done
    for m in $rev; do
        if mounted_under | grep -qx "$root/$m"; then
            umount -R "$root/$m" 2>/dev/null || umount -R -l "$root/$m" ||
                true
        fi
    done
}

# Remove $root only when nothing is mounted under it any more (never
# follow a bind mount of the host's /dev into rm).
remove_root() {
    if [ -n "$(mounted_under)" ]; then
        echo "fresh_check: not removing $root: still mounted:" \
            "$(mounted_under | tr '\n' ' ')" >&2
        return 1
    fi
    rm -rf --one-file-system "$root"
}

trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

step() { # NAME [NOTE]: print the wall time since the last step
    now=$(date +%s)
    printf 'fresh_check: %-34s %5d s%s\n' "$1" "$((now - step_start))" \
        "${2:+ ($2)}"
    step_start=$now
}

apt_secs() { # the seconds apt-get install has run in the root so far
    log=$root/var/log/apt/history.log
    if [ ! -f "$log" ]; then
        echo 0
        return
    fi
    sed -n 's/^\(Start\|End\)-Date: //p' "$log" |
        while read -r d t; do date -d "$d $t" +%s; done | paste - - |
        { s=0; while read -r a b; do s=$((s + b - a)); done; echo "$s"; }
}

cleanup
if [ -e "$root" ]; then   # a kept root of an earlier run: not timed
    remove_root || exit 2
fi
T0=$(date +%s)
step_start=$T0
echo "fresh_check: debootstrap bookworm (minbase) from $MIRROR into $root"
if ! debootstrap --variant=minbase bookworm "$root" "$MIRROR" \
        > "$dir/debootstrap.log" 2>&1; then
    tail -n 20 "$dir/debootstrap.log" >&2
    die "debootstrap failed (log: $dir/debootstrap.log)"
fi
cat > "$root/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
EOF
# Name resolution as on the host (slurm needs the host name to resolve);
# no service starts inside a chroot (there is no init to stop it).
cp /etc/resolv.conf /etc/hosts "$root/etc/"
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
step "debootstrap"

mount -t proc proc "$root/proc"
# /sys with the host's cgroup mounts under it, as on a booted machine
# (slurmd needs /sys/fs/cgroup); rslave: unmounting them here leaves the
# host's alone.
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"

commit=$(git -C "$here" rev-parse HEAD)
git clone -q --no-hardlinks "$here" "$root/tbench"
git -C "$root/tbench" checkout -q "$commit"
step "clone $(printf '%.12s' "$commit")"

# README's two commands: the first code block's first two lines.
# shellcheck disable=SC2016 # the backquotes are Markdown's, not the shell's
cmds=$(sed -n '/^```sh$/,/^```$/{/^```$/q;/^```sh$/d;p;}' "$here/README.md")
cmd1=$(printf '%s\n' "$cmds" | sed -n 1p)
cmd2=$(printf '%s\n' "$cmds" | sed -n 2p)
if [ -z "$cmd1" ] || [ -z "$cmd2" ]; then
    die "README.md: no two commands in its first code block"
fi

inroot() { # COMMAND LOG: run COMMAND in /tbench inside the root
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/sh -c "cd /tbench && $1" > "$2" 2>&1
}

status=0
echo "fresh_check: README command 1: $cmd1"
rc=0
a0=$(apt_secs)
inroot "$cmd1" "$dir/cmd1.log" || rc=$?
a1=$(apt_secs)
step "README command 1 (exit $rc)" "apt-get install $((a1 - a0)) s"
if [ "$rc" -ne 0 ]; then
    tail -n 20 "$dir/cmd1.log"
    status=1
fi

echo "fresh_check: README command 2: $cmd2"
rc=0
inroot "$cmd2" "$dir/cmd2.log" || rc=$?
a2=$(apt_secs)
step "README command 2 (exit $rc)" "apt-get install $((a2 - a1)) s"
count=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$dir/cmd2.log" |
    tail -n 1 || true)
echo "fresh_check: count line: ${count:-(none)}"
if [ "$rc" -ne 0 ] || [ -z "$count" ] || [ "${count#* passed, }" != "0 failed" ]
then
    grep -E '^(not ok|FAIL|Summary of Failures)' "$dir/cmd2.log" |
        head -n 20 || true
    tail -n 20 "$dir/cmd2.log"
    status=1
fi

cleanup
if [ "$status" -eq 0 ] && [ -z "${KEEP:-}" ]; then
    remove_root || true
fi
step_start=$T0
step "total"
if [ "$status" -eq 0 ]; then
    echo "fresh_check: passed: both README commands on a fresh Debian 12 root"
else
    echo "fresh_check: FAILED (logs in $dir; the root is kept: $root)"
fi
exit $status
