/** Default ports agreed for the servers of the roadmap, so docs and compose agree before a server exists. */
export const PLANNED_PORTS: Readonly<Record<string, number>> = {
  network: 7101,
  service: 7102,
  ports: 7103,
  "dns-config": 7104,
  storage: 7105,
  proxy: 7106,
  webcheck: 7107,
};

/** The planned port of a server, or the next one after every port in use (7108, 7109…). */
export function plannedPort(name: string, used: readonly number[]): number {
  const planned = Object.hasOwn(PLANNED_PORTS, name) ? PLANNED_PORTS[name] : undefined;
  if (planned !== undefined) return planned;
  return Math.max(...used, ...Object.values(PLANNED_PORTS)) + 1;
}
