/* Whole-message I/O on a file descriptor (fdio.h). */
#include "fdio.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

int tb_fd_send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return TB_EIO;
        c += k;
        n -= (size_t)k;
    }
    return 0;
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
