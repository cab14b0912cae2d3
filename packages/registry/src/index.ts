/** @roadnerd/registry — every RoadNerd server, as it declares itself in its own package.json. */
export { loadServer } from "./load-server.ts";
export { PLANNED_PORTS, plannedPort } from "./planned-ports.ts";
export { REPO_ROOT, type RegisteredServer, readRegistry, selectedServers } from "./read-registry.ts";
