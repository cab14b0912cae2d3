/**
 * zod 4 compiles a parser for each object schema with `new Function` at its first parse (its "fastpass"): code
 * made from strings, compiled at every start (a server parses each tool's example when it defines it) and never
 * in the code cache `pnpm build` writes (ADR 0062): 7 ms of network's start in a profile. Our inputs are a few
 * fields; zod's interpreted parse is what they need. Imported first by every entry of the kernel, so every
 * schema is made after it (zod reads the setting when an object schema is made).
 */
import { config } from "zod";

config({ jitless: true });
