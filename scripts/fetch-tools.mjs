#!/usr/bin/env node
// Fetch pinned tools from the npm registry into .tools/ before a sealed run (which cannot reach the registry):
//   node scripts/fetch-tools.mjs node24 conformance
import { conformanceCli, nodeBinary } from "./lib/tools.mjs";

for (const tool of process.argv.slice(2)) {
  const node = /^node(\d+)$/.exec(tool);
  if (node) console.log(`fetch-tools: ${nodeBinary(node[1])}`);
  else if (tool === "conformance") console.log(`fetch-tools: ${conformanceCli()}`);
  else {
    console.error(`fetch-tools: unknown tool ${tool} (node<major>, conformance)`);
    process.exit(2);
  }
}
