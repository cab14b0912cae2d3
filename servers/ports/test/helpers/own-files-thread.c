/*
 * For proc-reads.test.ts: a TCP listener on 127.0.0.1 (any port, printed) held only by a thread that has a table
 * of files of its own (unshare(CLONE_FILES)): the leader's /proc/<pid>/fd does not have it, `ss -p` names no one,
 * /proc/<pid>/task/<tid>/fd does. The leader holds as many other files, so no count tells the tables apart.
 * The process ends when stdin closes (or after 60 s).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int ready[2];

static void *own_table(void *arg) {
  (void)arg;
  if (unshare(CLONE_FILES) != 0) _exit(2);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0) _exit(3);
  if (getsockname(fd, (struct sockaddr *)&a, &len) != 0) _exit(4);
  unsigned short port = ntohs(a.sin_port);
  if (write(ready[1], &port, sizeof port) != sizeof port) _exit(5);
  for (;;) pause();
  return NULL;
}

int main(void) {
  if (pipe(ready) != 0) return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, own_table, NULL) != 0) return 1;
  unsigned short port;
  if (read(ready[0], &port, sizeof port) != sizeof port) return 1;
  /* As many files in the leader's table as in the thread's. */
  if (open("/dev/null", O_RDONLY) < 0) return 1;
  printf("%u\n", port);
  fflush(stdout);
  char c;
  time_t until = time(NULL) + 60;
  while (time(NULL) < until && read(0, &c, 1) > 0) {
  }
  _exit(0);
}
