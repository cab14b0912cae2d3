/*
 * For resumed-dump.test.ts: binds COUNT UDP sockets on 127.0.1.x:PORT, says "ready", then closes the oldest
 * and binds another on the next address, back to back, until stdin closes or 60 s pass. C, not Node: the
 * churn must fall between the two datagrams of one dump (microseconds), as a determined local user's would.
 *   churn-udp PORT COUNT
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int bind_one(int port, int n) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  a.sin_addr.s_addr = htonl(0x7f000000u | ((1u + (unsigned)n / 250u) << 8) | (1u + (unsigned)n % 250u));
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    perror("churn-udp: bind");
    exit(1);
  }
  return fd;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int port = atoi(argv[1]), count = atoi(argv[2]);
  if (port < 1 || port > 65535 || count < 1 || count > 1000) return 2;
  int fds[1000];
  for (int i = 0; i < count; i++) fds[i] = bind_one(port, i);
  printf("ready\n");
  fflush(stdout);
  fcntl(0, F_SETFL, O_NONBLOCK);
  time_t until = time(NULL) + 60;
  int oldest = 0, n = count;
  char c;
  for (long i = 0; time(NULL) < until; i++) {
    if ((i & 1023) == 0 && read(0, &c, 1) == 0) break;
    close(fds[oldest]);
    fds[oldest] = bind_one(port, n);
    oldest = (oldest + 1) % count;
    n = n >= 2000 ? count : n + 1;
  }
  return 0;
}
