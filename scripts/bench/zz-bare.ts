import { buildBareBundle, buildBareAsServer } from "./bare-bundle.ts";
const a = await buildBareBundle(); const b = await buildBareAsServer();
console.log(a.main); console.log(b.main);
