/** An error body from a server, as an exception: match on `code`, never on instanceof across packages. */
export class RemoteError extends Error {
  readonly code: string;
  readonly status: number;
  readonly hint: string | undefined;
  constructor(code: string, message: string, status: number, hint?: string) {
    super(message);
    this.name = "RemoteError";
    this.code = code;
    this.status = status;
    this.hint = hint;
  }
}

export function remoteErrorFrom(status: number, body: unknown): RemoteError {
  const e = (body as { error?: { code?: unknown; message?: unknown; hint?: unknown } } | null)?.error;
  if (e && typeof e.code === "string") {
    return new RemoteError(e.code, String(e.message ?? ""), status, typeof e.hint === "string" ? e.hint : undefined);
  }
  return new RemoteError("E_INTERNAL", `unexpected response (status ${status})`, status);
}
