/** Command lines shown by the ports server never carry a password, a token or URL credentials. */
import { describe, expect, it } from "vitest";
import { MASK, maskArgv, maskCommandLine } from "../src/runtime/mask.ts";

describe("maskArgv", () => {
  it("masks --name=value, the argument after a secret flag, NAME=value and URL userinfo", () => {
    expect(
      maskArgv([
        "/usr/bin/node",
        "server.js",
        "--password=hunter2",
        "--token",
        "abc123",
        "token=abc",
        "DB_PASSWORD=s3cret",
        "https://u:p@host.example/path",
        "--db=postgres://admin:pw@db.example:5432/app",
        "--port=8080",
        "-p",
        "8080",
      ]),
    ).toEqual([
      "/usr/bin/node",
      "server.js",
      `--password=${MASK}`,
      "--token",
      MASK,
      `token=${MASK}`,
      `DB_PASSWORD=${MASK}`,
      `https://${MASK}@host.example/path`,
      `--db=postgres://${MASK}@db.example:5432/app`,
      "--port=8080",
      "-p",
      "8080",
    ]);
  });

  it("masks Java system properties, single-dash flags and secret query parameters in a URL", () => {
    expect(
      maskArgv([
        "java",
        "-Djavax.net.ssl.keyStorePassword=changeit",
        "-Xmx512m",
        "-secret",
        "x",
        "http://host.example/cb?api_key=k1&q=2",
        "Authorization: Bearer abc.def",
      ]),
    ).toEqual([
      "java",
      `-Djavax.net.ssl.keyStorePassword=${MASK}`,
      "-Xmx512m",
      "-secret",
      MASK,
      `http://host.example/cb?api_key=${MASK}&q=2`,
      `Authorization: Bearer ${MASK}`,
    ]);
  });

  it("masks -p only where it is a password: glued for MySQL clients, next for sshpass and redis-cli", () => {
    expect(maskArgv(["mysql", "-uroot", "-phunter2", "-P", "3306"])).toEqual([
      "mysql",
      "-uroot",
      `-p${MASK}`,
      "-P",
      "3306",
    ]);
    expect(maskArgv(["/usr/bin/mysql", "-p"])).toEqual(["/usr/bin/mysql", "-p"]);
    expect(maskArgv(["sshpass", "-p", "hunter2", "ssh", "-p", "22", "host.example"])).toEqual([
      "sshpass",
      "-p",
      MASK,
      "ssh",
      "-p",
      MASK,
      "host.example",
    ]);
    expect(maskArgv(["redis-cli", "-a", "hunter2", "-p", "6379"])).toEqual(["redis-cli", "-a", MASK, "-p", "6379"]);
    expect(maskArgv(["ssh", "-p", "2222", "host.example"])).toEqual(["ssh", "-p", "2222", "host.example"]);
    expect(maskArgv(["docker", "run", "-p", "8080:80", "img"])).toEqual(["docker", "run", "-p", "8080:80", "img"]);
  });

  it("does not mask a flag's next argument when it is another option, nor the program itself", () => {
    expect(maskArgv(["--token", "--verbose"])).toEqual(["--token", "--verbose"]);
    expect(maskArgv(["app", "--password", "--verbose", "x"])).toEqual(["app", "--password", "--verbose", "x"]);
  });
});

describe("maskCommandLine", () => {
  it("joins argv with spaces after masking, and splits a joined line first", () => {
    expect(maskCommandLine(["node", "app.js", "--password=hunter2"])).toBe(`node app.js --password=${MASK}`);
    expect(maskCommandLine("node  app.js --password hunter2 token=abc")).toBe(
      `node app.js --password ${MASK} token=${MASK}`,
    );
  });
});

describe("secrets written as JSON or as header-style lines", () => {
  it("are masked inside an argument too", () => {
    const argv = ["app", '{"password":"PW10"}', "password:PW11", "x-api-key: PW12", "--auth", "PW9", "secret: sec777"];
    const shown = maskCommandLine(argv);
    for (const secret of ["PW10", "PW11", "PW12", "PW9", "sec777"]) expect(shown).not.toContain(secret);
    // A URL after a scheme-like word is not a "key: value" secret.
    expect(maskCommandLine(["curl", "https://example.com/path"])).toBe("curl https://example.com/path");
  });
});
