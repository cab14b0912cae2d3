/*
 * sock-diag.node: one question to the kernel's socket diagnostics (netlink NETLINK_SOCK_DIAG, sock_diag(7)),
 * the answer's bytes back, unparsed. The kernel reads it, the kernel's own code (src/netlink/sock-diag.ts) asks
 * and parses; this file only moves bytes. It is read-only by construction: the one message type it sends is
 * SOCK_DIAG_BY_FAMILY (a query; SOCK_DESTROY and every other type are refused before a socket exists), and the
 * netlink family is fixed. Why a native module at all: Node has no netlink socket, and /proc/net/tcp makes the
 * kernel walk its whole connection hash at every read (~5 ms whatever the namespace holds), which a LISTEN-only
 * query skips (ADR 0064).
 *
 *   request(question: Uint8Array) -> Buffer   every reply message of a dump (NLM_F_DUMP), or the one reply
 * Throws an Error with `code` (an errno name) when the kernel refuses or the question is malformed.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <malloc.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

/* A question is one inet_diag_req_v2 (56 bytes) with an optional filter: far under a page. */
#define QUESTION_MAX 4096
/* An answer past this is refused (E2BIG), never cut: a cut list would hide sockets. ~900k sockets of 72 bytes. */
#define ANSWER_MAX (64u * 1024u * 1024u)
#define CHUNK 65536

static napi_value fail(napi_env env, const char *code, const char *message) {
  napi_throw_error(env, code, message);
  return NULL;
}

static const char *errno_code(int err) {
  switch (err) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case E2BIG: return "E2BIG";
    default: return "EIO";
  }
}

/*
 * One netlink socket per Node environment (the main thread, each worker), kept between questions: opening and
 * closing one per question was half of a question's cost (~15 of ~30 us; issue 17, ports' tools ask four at a
 * call). A question that does not end cleanly (a kernel error, a timeout, an answer too large, a reply that is
 * not ours) closes it, so no reply of an earlier question is ever read as an answer: the next one opens anew.
 */
typedef struct {
  int fd;
  uint32_t seq;
} channel;

static void channel_close(channel *ch) {
  if (ch->fd >= 0) close(ch->fd);
  ch->fd = -1;
}

static void channel_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  channel_close((channel *)data);
  free(data);
}

/* The environment's socket, opened when there is none; -1 with errno set when it cannot be. */
static int channel_fd(channel *ch) {
  if (ch->fd >= 0) return ch->fd;
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return -1;
  /* The kernel answers at once; a bound wait all the same, so nothing here can hang the event loop. */
  struct timeval tv = {.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ch->fd = fd;
  return fd;
}

static napi_value request(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1)
    return fail(env, "EINVAL", "request(question): a Uint8Array is required");
  bool is_typed = false;
  napi_is_typedarray(env, argv[0], &is_typed);
  if (!is_typed) return fail(env, "EINVAL", "request(question): a Uint8Array is required");
  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array)
    return fail(env, "EINVAL", "request(question): a Uint8Array is required");
  if (length < NLMSG_HDRLEN || length > QUESTION_MAX) return fail(env, "EINVAL", "question size out of bounds");

  /* Copied first: the checks below and the send see the same bytes. */
  char question[QUESTION_MAX];
  memcpy(question, data, length);
  struct nlmsghdr *q = (struct nlmsghdr *)question;
  if (q->nlmsg_len != length) return fail(env, "EINVAL", "nlmsg_len is not the question's size");
  if (q->nlmsg_type != SOCK_DIAG_BY_FAMILY) return fail(env, "EINVAL", "only SOCK_DIAG_BY_FAMILY may be asked");
  if (!(q->nlmsg_flags & NLM_F_REQUEST) || (q->nlmsg_flags & ~(NLM_F_REQUEST | NLM_F_DUMP)))
    return fail(env, "EINVAL", "flags other than NLM_F_REQUEST and NLM_F_DUMP");
  int dump = (q->nlmsg_flags & NLM_F_DUMP) != 0;

  channel *ch = NULL;
  if (napi_get_instance_data(env, (void **)&ch) != napi_ok || ch == NULL)
    return fail(env, "EIO", "the module's state is missing");
  int fd = channel_fd(ch);
  if (fd < 0) return fail(env, errno_code(errno), "socket(AF_NETLINK, NETLINK_SOCK_DIAG) failed");
  /* Our own sequence number on the copy: every reply read must carry it. */
  uint32_t seq = ++ch->seq;
  q->nlmsg_seq = seq;
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  ssize_t sent;
  do sent = sendto(fd, question, length, 0, (struct sockaddr *)&kernel, sizeof kernel);
  while (sent < 0 && errno == EINTR);
  if (sent != (ssize_t)length) {
    int err = errno;
    channel_close(ch);
    return fail(env, errno_code(err), "sending the question failed");
  }

  char *out = NULL;
  size_t used = 0, cap = 0, first_datagram = 0;
  int err = 0, done = 0;
  char chunk[CHUNK] __attribute__((aligned(NLMSG_ALIGNTO)));
  int answered = 0; /* the kernel's own NLMSG_ERROR ended the exchange: an answer, the socket stays good */
  while (!done) {
    struct sockaddr_nl from;
    socklen_t from_len = sizeof from;
    ssize_t n = recvfrom(fd, chunk, sizeof chunk, 0, (struct sockaddr *)&from, &from_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (n == 0) break;
    /* Only the kernel (port 0) answers: another process that may write to our port cannot plant a reply. */
    if (from_len < sizeof from || from.nl_family != AF_NETLINK || from.nl_pid != 0) {
      err = EIO;
      break;
    }
    size_t keep = 0; /* bytes of this chunk that are answers (complete messages before DONE or ERROR) */
    struct nlmsghdr *h = (struct nlmsghdr *)chunk;
    int left = (int)n;
    for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_seq != seq) {
        /* Not the answer to this question: never counted as one (the socket is closed below). */
        err = EIO;
        break;
      }
      if (h->nlmsg_type == NLMSG_DONE) {
        done = 1;
        break;
      }
      if (h->nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr *e = (struct nlmsgerr *)NLMSG_DATA(h);
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof *e)) err = EIO;
        else {
          if (e->error != 0) err = -e->error;
          answered = 1;
        }
        done = 1;
        break;
      }
      keep = (size_t)((char *)h - chunk) + NLMSG_ALIGN(h->nlmsg_len);
      if (keep > (size_t)n) keep = (size_t)n;
      if (!dump) done = 1;
    }
    if (err) break;
    /* The size of the first datagram that carried answers: one with room for more ended the kernel's walk. */
    if (keep > 0 && first_datagram == 0) first_datagram = (size_t)n;
    if (keep > 0) {
      if (used + keep > ANSWER_MAX) {
        err = E2BIG;
        break;
      }
      if (used + keep > cap) {
        size_t next = cap ? cap * 2 : CHUNK;
        while (next < used + keep) next *= 2;
        char *grown = realloc(out, next);
        if (!grown) {
          err = ENOMEM;
          break;
        }
        out = grown;
        cap = next;
      }
      memcpy(out + used, chunk, keep);
      used += keep;
    }
  }
  /* Ended cleanly (every reply of this question read, an answer or the kernel's refusal such as ENOENT for a
   * lookup that finds nothing): kept for the next one; otherwise closed. */
  if (!done || (err && !answered)) channel_close(ch);
  if (err) {
    free(out);
    return fail(env, errno_code(err), err == E2BIG ? "the answer is larger than 64 MiB" : "the kernel refused the question");
  }
  napi_value result;
  void *copy = NULL;
  napi_status st = napi_create_buffer_copy(env, used, used ? out : "", &copy, &result);
  free(out);
  if (st != napi_ok) return fail(env, "ENOMEM", "no memory for the answer");
  napi_value size;
  if (napi_create_uint32(env, (uint32_t)first_datagram, &size) != napi_ok ||
      napi_set_named_property(env, result, "firstDatagram", size) != napi_ok)
    return fail(env, "ENOMEM", "no memory for the answer");
  return result;
}

/*
 * sameFiles(a, b) -> boolean | null: whether two tasks share one files table (kcmp(2) KCMP_FILES, read-only; the
 * caller needs ptrace-read access to both, as to their /proc fd directories). null when the kernel cannot say
 * (a task gone, no access, kcmp not built in). The ports server's thread search skips a thread whose table is
 * its leader's, already read: only threads that unshared theirs are listed.
 */
static napi_value same_files(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t a = 0, b = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_int32(env, argv[0], &a) != napi_ok || napi_get_value_int32(env, argv[1], &b) != napi_ok ||
      a <= 0 || b <= 0)
    return fail(env, "EINVAL", "sameFiles(a, b): two task ids are required");
  long r = syscall(SYS_kcmp, (pid_t)a, (pid_t)b, KCMP_FILES, 0UL, 0UL);
  napi_value out;
  if (r < 0) napi_get_null(env, &out);
  else napi_get_boolean(env, r == 0, &out);
  return out;
}

/*
 * mallocTrim() -> boolean: glibc's malloc_trim(0), whether it gave any memory back. After a quiet spell's full GC
 * (src/process/memory.ts) the pages V8's worker threads freed in their own malloc arenas stay with the process:
 * glibc returns an arena's memory only from its top, and only as it frees there (8–12 MiB of `up` after 1,000
 * calls, stop 36). malloc_trim releases every free page of every arena (madvise), which nothing in Node calls.
 * Elsewhere than glibc it is a no-op answering false.
 */
static napi_value malloc_trim_now(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#ifdef __GLIBC__
  released = malloc_trim(0);
#endif
  napi_value out;
  napi_get_boolean(env, released != 0, &out);
  return out;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  channel *ch = malloc(sizeof *ch);
  if (!ch) return NULL;
  ch->fd = -1;
  /* Numbering starts anywhere: the next number is not known in advance from outside. */
  ch->seq = 0;
  getrandom(&ch->seq, sizeof ch->seq, GRND_NONBLOCK);
  if (napi_set_instance_data(env, ch, channel_finalize, NULL) != napi_ok) {
    free(ch);
    return NULL;
  }
  napi_value fn;
  if (napi_create_function(env, "request", NAPI_AUTO_LENGTH, request, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "request", fn) != napi_ok) return NULL;
  napi_value same;
  if (napi_create_function(env, "sameFiles", NAPI_AUTO_LENGTH, same_files, NULL, &same) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "sameFiles", same) != napi_ok) return NULL;
  napi_value trim;
  if (napi_create_function(env, "mallocTrim", NAPI_AUTO_LENGTH, malloc_trim_now, NULL, &trim) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "mallocTrim", trim) != napi_ok) return NULL;
  return exports;
}
