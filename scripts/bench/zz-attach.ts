import { join } from "node:path";
import { REPO_ROOT, selectedServers } from "@roadnerd/registry";
import { buildBareBundle } from "./bare-bundle.ts";
import { benchAttach } from "./startup.ts";
const servers = selectedServers().filter((s) => process.argv.length <= 2 || process.argv.slice(2).includes(s.name));
const bare = await buildBareBundle();
await benchAttach(process.execPath, servers.map((s) => ({ name: s.name, label: process.version, entry: join(REPO_ROOT, s.entry), target: true })), bare.main, Number(process.env.STARTS ?? 8));
bare.remove();
