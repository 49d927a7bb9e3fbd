/* Whole-message I/O on a file descriptor: the byte loops of the worker
 * protocols (harness/worker.c, harness/xworker.c), which send and
 * receive fixed headers and payloads over a socketpair, and of the GPU
 * peaks' measuring child (harness/gpu_peak.c), which answers on a
 * pipe; and whether such a child has ended. */
#ifndef TB_BASE_FDIO_H
#define TB_BASE_FDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Send all n bytes of p on the socket fd, again after EINTR.  Sent with
 * MSG_NOSIGNAL: a peer that has gone is an error, never SIGPIPE.  0, or
 * TB_EIO (the peer is gone or another error). */
int tb_fd_send_all(int fd, const void *p, size_t n);

/* tb_fd_send_all for a descriptor that is not a socket (a pipe): write(),
 * again after EINTR.  0 or TB_EIO. */
int tb_fd_write_all(int fd, const void *p, size_t n);

/* Read exactly n bytes from fd into p, again after EINTR.  1: done; 0:
 * end of file before any byte (the peer closed between messages);
 * TB_EIO: end of file inside the message, or an error. */
int tb_fd_recv_all(int fd, void *p, size_t n);

/* Has the child process pid ended?  Looked at without reaping it
 * (WNOWAIT): its wait status and its process group stay for the caller.
 * A worker whose end of file never comes (a child it forked holds its
 * socket) is seen dead this way. */
bool tb_child_ended(pid_t pid);

#endif
