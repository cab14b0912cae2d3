/*
 * For who-uses-port.test.ts: a TCP socket bound to 127.0.0.1 (any port, printed) that never listens: nothing
 * accepts on the port, yet a bind to it fails (EADDRINUSE). Ends when stdin closes (or after 60 s).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) return 1;
  if (getsockname(fd, (struct sockaddr *)&a, &len) != 0) return 1;
  printf("%d\n", ntohs(a.sin_port));
  fflush(stdout);
  char c;
  time_t until = time(NULL) + 60;
  while (time(NULL) < until && read(0, &c, 1) > 0) {
  }
  return 0;
}
