import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { renderErrorTable } from "../src/errors/error-table.ts";
import { ERROR_CODES, ERROR_MEANING, ERROR_STATUS } from "../src/errors/errors.ts";

const docPath = new URL("../../../docs/errors.md", import.meta.url);

describe("error codes and their docs", () => {
  it("every code has a status and a meaning", () => {
    for (const code of ERROR_CODES) {
      expect(ERROR_STATUS[code]).toBeGreaterThanOrEqual(400);
      expect(ERROR_MEANING[code].length).toBeGreaterThan(10);
    }
  });

  it("docs/errors.md holds exactly the generated table (run `pnpm generate` to refresh)", async () => {
    const doc = await readFile(docPath, "utf8");
    const table = renderErrorTable();
    expect(doc).toContain(table);
    // No code documented that the kernel does not have.
    const documented = [...doc.matchAll(/`(E_[A-Z_]+)`/g)].map((m) => m[1]);
    for (const code of documented) expect(ERROR_CODES).toContain(code);
  });
});
