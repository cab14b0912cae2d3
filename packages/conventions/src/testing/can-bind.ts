import { createSocket } from "node:dgram";

/** Whether this process may bind UDP `port` on `ip` (port 53 needs root): tests that need it skip or fail with a reason. */
export async function canBind(ip: string, port: number): Promise<boolean> {
  const probe = createSocket(ip.includes(":") ? "udp6" : "udp4");
  const ok = await new Promise<boolean>((resolve) => {
    probe.once("error", () => resolve(false));
    probe.bind(port, ip, () => resolve(true));
  });
  await new Promise<void>((resolve) => {
    try {
      probe.close(() => resolve());
    } catch {
      resolve();
    }
  });
  return ok;
}
