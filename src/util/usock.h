/* Unix stream sockets that only their owner can use (qosim vm --console,
 * docs/security.md). A socket file's mode is all the kernel checks before
 * connect() succeeds, and bind() makes it with the caller's umask; these
 * make it 0600 whatever the umask, refuse a folder where another user could
 * swap it, and name every peer by the credentials the kernel took at its
 * connect() (SO_PEERCRED), which no peer can forge. */
#ifndef QOSIM_UTIL_USOCK_H
#define QOSIM_UTIL_USOCK_H

#include "err.h"

#include <stdio.h>
#include <sys/types.h>

/* Whether path's folder is one only its owner controls: owned by the
 * caller or root, and writable by nobody else unless sticky (as /tmp is:
 * there, others may not remove or rename what is ours). 0, or -1 with why
 * in e. */
int usock_folder_safe(const char *path, struct err *e);

/* A listening socket at path (which must not exist), mode 0600 from the
 * moment it exists. The descriptor, or -1 with why in e. */
int usock_listen(const char *path, struct err *e);

/* A connection to the socket at path: the descriptor, or -1 with why in e
 * (-QOSIM_EINVAL for a path no socket can have, -QOSIM_EIO for the rest). */
int usock_connect(const char *path, struct err *e);

/* The user and process at the other end of a connected socket. 0, or -1. */
int usock_peer(int fd, uid_t *uid, pid_t *pid);

/* The next connection to listening socket fd from this process's own user:
 * others (root, whom no file mode stops, included) are closed at once and
 * each is named in a line on log. A descriptor, or -1 with errno set. */
int usock_accept(int fd, FILE *log);

#endif
