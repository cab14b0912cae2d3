/** Fields the ports tools and the port watch share: one description of a socket, a holder, a process. */
import { z } from "zod";
import { PROTOS } from "./proc/net-table.ts";

export const protoField = z
  .enum(PROTOS)
  .describe("tcp/udp over IPv4, tcp6/udp6 over IPv6 (a [::] tcp6 listener also takes IPv4 unless v6only)");

export const localField = z.string().describe("local address:port, IPv6 in brackets, e.g. 127.0.0.1:8080, [::]:443");

export const socketRef = z.object({
  proto: protoField,
  local: localField,
  bound: z
    .literal(true)
    .optional()
    .describe("bound but not listening: a new bind to it fails all the same (seen on Linux 6.8 and later)"),
});

/** The largest pid Linux allows (PID_MAX_LIMIT, 2^22). */
export const MAX_PID = 4_194_304;

export const pidField = z.number().int().min(1).max(MAX_PID).describe("process id");

export const netnsField = z
  .string()
  .nullable()
  .describe("the network namespace these sockets are in (this server's own), e.g. net:[4026531840]");

export const sourceField = z
  .enum(["netlink", "proc", "ss"])
  .describe("where the sockets came from: the kernel's socket diagnostics (netlink), /proc/net or `ss`");

export const unitField = z
  .string()
  .nullable()
  .describe("systemd unit the process belongs to (from /proc/<pid>/cgroup), e.g. jenkins.service; null if none");

export const cmdField = z.string().describe("command line, secrets masked, cut to 300 characters");
