/**
 * The client's answer cap: a host that sends more than MAX_ANSWER_BYTES (a fleet host gone wrong, or hostile)
 * is cut off with a typed error while it streams, not read into memory whole; a normal answer is unchanged.
 * A real HTTP server on 127.0.0.1:0 streams the body.
 */
import { createServer, type Server } from "node:http";
import { createClient, MAX_ANSWER_BYTES, RemoteError } from "@roadnerd/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: Server;
let url = "";
let sent = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url === "/actions/small") {
      res.end(JSON.stringify({ summary: "fine" }));
      return;
    }
    // A JSON string that never ends, 1 MiB at a time, until the client goes away (bounded: 64 MiB).
    res.write('{"summary":"');
    const mib = "x".repeat(1024 * 1024);
    const more = (): void => {
      while (sent < 64 * 1024 * 1024) {
        sent += mib.length;
        if (!res.write(mib)) {
          res.once("drain", more);
          return;
        }
      }
      res.end('"}');
    };
    res.on("close", () => res.removeAllListeners("drain"));
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the client's answer cap", () => {
  it("a normal answer is read as before", async () => {
    expect(await createClient(url).call("small")).toEqual({ summary: "fine" });
  });

  it("an answer past the cap is cut off with a typed error, long before the host stops sending", async () => {
    const err = await createClient(url)
      .call("huge")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    expect(err).toMatchObject({ code: "E_INTERNAL", status: 502 });
    expect((err as Error).message).toContain("more than 16 MiB (cut off)");
    // The host was stopped by the cut: it never got to send its 64 MiB.
    expect(sent).toBeLessThan(4 * MAX_ANSWER_BYTES);
    expect(sent).toBeGreaterThan(MAX_ANSWER_BYTES);
  });
});
