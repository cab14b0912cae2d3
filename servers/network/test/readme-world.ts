/**
 * The world the README's curl lines and the root suites run in: DNS answered by a test server on a loopback
 * address of its own (unique per world, so suites may run side by side), the captive probes on a loopback web
 * server, the public defaults denied by name. Needs port 53 (root or a user namespace).
 */
import { canBind } from "@roadnerd/conventions/testing";
import { startLoopbackWorld } from "./helpers/loopback-world.ts";

let worlds = 0;

export async function startReadmeWorld() {
  worlds += 1;
  const dnsIp = `127.54.${process.pid % 250}.${worlds % 250}`;
  if (!(await canBind(dnsIp, 53))) throw new Error(`the README's world needs ${dnsIp}:53 (run as root)`);
  return startLoopbackWorld(dnsIp);
}
