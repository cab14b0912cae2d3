/** The port a URL connects to: its own, or its scheme's (https 443, anything else 80). */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}
