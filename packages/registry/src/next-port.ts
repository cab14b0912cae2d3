/** Ports live once, in each server's package.json: a new server gets the next one after every declared port. */
const FIRST_PORT = 7101;

/** The default port for a new server: one above the highest declared port (7101 for the first server). */
export function plannedPort(used: readonly number[]): number {
  return Math.max(FIRST_PORT - 1, ...used) + 1;
}
