/**
 * A client that announces a body over a server's limit and sends only part of it: a Content-Length of 100 MB
 * with `bytes` of it, or `bytes` in chunks without a Content-Length. A server that cuts early answers and closes
 * the connection while the rest is still to come; one that waits for the whole body never answers.
 */
import { connect } from "node:net";

export interface Oversized {
  /** The answer's status line and headers ("" when the connection closed without one). */
  head: string;
  /** Everything received, once the server has closed the connection (never, while it keeps it). */
  closed: Promise<string>;
}

const CHUNK = 16 * 1024;

export async function sendOversized(
  port: number,
  path: string,
  body: { contentLength: number; bytes: number } | { chunked: true; bytes: number },
  headers: Record<string, string> = {},
): Promise<Oversized> {
  const socket = connect(port, "127.0.0.1");
  let text = "";
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(text)));
  socket.on("error", () => undefined);
  const head = new Promise<string>((resolve) => {
    socket.on("data", (c: Buffer) => {
      text += c.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) resolve(text.slice(0, end));
    });
    void closed.then(() => resolve(""));
  });
  const chunked = "chunked" in body;
  const framing = chunked ? "transfer-encoding: chunked" : `content-length: ${body.contentLength}`;
  const lines = Object.entries({ host: `127.0.0.1:${port}`, "content-type": "application/json", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.write(`POST ${path} HTTP/1.1\r\n${lines}${framing}\r\n\r\n`);
  for (let sent = 0; sent < body.bytes; sent += CHUNK) {
    const data = Buffer.alloc(Math.min(CHUNK, body.bytes - sent), 0x20);
    socket.write(
      chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]) : data,
    );
  }
  // Nothing more is written, and the socket is not ended from here: only the server can close it.
  return { head: await head, closed };
}
