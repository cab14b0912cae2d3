/*
 * For proc-reads.test.ts: a TCP listener on 127.0.0.1 (any port, printed) held by a process whose leader thread
 * has exited while another thread runs on: /proc/<pid>/fd is empty, /proc/<pid>/task/<tid>/fd holds the socket.
 * The thread ends the process when stdin closes (or after 60 s).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void *live_on(void *arg) {
  (void)arg;
  char c;
  time_t until = time(NULL) + 60;
  while (time(NULL) < until && read(0, &c, 1) > 0) {
  }
  _exit(0);
  return NULL;
}

int main(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0) return 1;
  if (getsockname(fd, (struct sockaddr *)&a, &len) != 0) return 1;
  printf("%d\n", ntohs(a.sin_port));
  fflush(stdout);
  pthread_t t;
  if (pthread_create(&t, NULL, live_on, NULL) != 0) return 1;
  /* The leader alone exits (not exit(3), which would end every thread). */
  syscall(SYS_exit, 0);
  return 0;
}
