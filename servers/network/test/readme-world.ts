/**
 * The world the README's curl lines run in (test/server-readmes.test.ts): DNS answered by a test server on a
 * loopback address, the captive probes on a loopback web server. Needs port 53 (root or a user namespace).
 */
import { canBind } from "@roadnerd/conventions/testing";
import { startLoopbackWorld } from "./helpers/loopback-world.ts";

const DNS_IP = "127.53.13.1";

export async function startReadmeWorld() {
  if (!(await canBind(DNS_IP, 53))) throw new Error(`the README's world needs ${DNS_IP}:53 (run as root)`);
  return startLoopbackWorld(DNS_IP);
}
