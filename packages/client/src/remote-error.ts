/** An error body from a server, as an exception: match on `code`, never on instanceof across packages. */
export class RemoteError extends Error {
  readonly code: string;
  readonly status: number;
  readonly hint: string | undefined;
  /**
   * True when the answer was not a RoadNerd server's (no error body of ours, not JSON, past the size cap): what
   * answered is something else at that URL (a proxy, a redirect, another service), not the server's own error.
   */
  readonly unexpected: boolean;
  constructor(code: string, message: string, status: number, hint?: string, unexpected = false) {
    super(message);
    this.name = "RemoteError";
    this.code = code;
    this.status = status;
    this.hint = hint;
    this.unexpected = unexpected;
  }
}

export function remoteErrorFrom(status: number, body: unknown): RemoteError {
  const e = (body as { error?: { code?: unknown; message?: unknown; hint?: unknown } } | null)?.error;
  if (e && typeof e.code === "string") {
    return new RemoteError(e.code, String(e.message ?? ""), status, typeof e.hint === "string" ? e.hint : undefined);
  }
  return new RemoteError("E_INTERNAL", `unexpected response (status ${status})`, status, undefined, true);
}
