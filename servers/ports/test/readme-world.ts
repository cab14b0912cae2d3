/**
 * The world the README's curl lines run in: port 8080 on 127.0.0.1 held by a child whose command line carries
 * secrets (so `who_uses_port {"port":8080}` and `port_watch?port=8080` have something to name, masked). If 8080
 * is already taken in this namespace, the examples still answer (whoever holds it, or nobody).
 */
import { type Holder, startHolder } from "./helpers/holder.ts";

export async function startReadmeWorld() {
  let holder: Holder | undefined;
  try {
    holder = await startHolder([{ proto: "tcp", host: "127.0.0.1", port: 8080 }]);
  } catch {
    holder = undefined;
  }
  return { env: {}, close: async () => holder?.stop() };
}
