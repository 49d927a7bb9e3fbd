/* Whole-message I/O on a file descriptor (fdio.h). */
#include "fdio.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

/* Write all n bytes of p: send() without SIGPIPE on a socket, else
 * write(). */
static int put_all(int fd, const void *p, size_t n, bool socket)
{
    const char *c = p;
    while (n) {
        ssize_t k = socket ? send(fd, c, n, MSG_NOSIGNAL) : write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return TB_EIO;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

int tb_fd_send_all(int fd, const void *p, size_t n)
{
    return put_all(fd, p, n, true);
}

int tb_fd_write_all(int fd, const void *p, size_t n)
{
    return put_all(fd, p, n, false);
}

int tb_fd_recv_all(int fd, void *p, size_t n)
{
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, c + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return got == 0 && k == 0 ? 0 : TB_EIO;
        got += (size_t)k;
    }
    return 1;
}

bool tb_child_ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return pid > 0 &&
           waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid == pid;
}
