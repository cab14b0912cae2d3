/** System proxy files read from a root the test writes: every format, credentials masked. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDefaultEnvironment, readSystemProxies } from "../../src/env/system-proxy.ts";
import { CORP_FILES, type EtcRoot, makeEtcRoot } from "../helpers/etc-root.ts";

let root: EtcRoot;
beforeAll(async () => {
  root = await makeEtcRoot(CORP_FILES);
});
afterAll(async () => {
  await root?.close();
});

describe("readSystemProxies", () => {
  it("finds every setting, masked, and names PAC addresses without fetching them", async () => {
    const r = await readSystemProxies(root.dir, new AbortController().signal);
    expect(r.settings).toEqual([
      {
        source: "etc_environment",
        path: "/etc/environment",
        name: "http_proxy",
        value: "http://[masked]@proxy.corp:3128",
      },
      { source: "etc_environment", path: "/etc/environment", name: "NO_PROXY", value: "localhost,.corp" },
      {
        source: "environment_d",
        path: "/etc/environment.d/90-proxy.conf",
        name: "HTTPS_PROXY",
        value: "[masked]@proxy.corp:3128",
      },
      {
        source: "systemd",
        path: "/etc/systemd/system.conf",
        name: "http_proxy",
        value: "http://[masked]@proxy.corp:8080",
      },
      { source: "apt", path: "/etc/apt/apt.conf", name: "Acquire::http::Proxy", value: "http://nested.corp:3128" },
      {
        source: "apt",
        path: "/etc/apt/apt.conf.d/95proxy",
        name: "Acquire::http::Proxy",
        value: "http://[masked]@apt-proxy.corp:3142",
      },
      {
        source: "apt",
        path: "/etc/apt/apt.conf.d/95proxy",
        name: "Acquire::https::Proxy::deb.example",
        value: "DIRECT",
      },
      { source: "gnome_defaults", path: "/etc/dconf/db/local.d/00-proxy", name: "system/proxy mode", value: "auto" },
      {
        source: "gnome_defaults",
        path: "/etc/dconf/db/local.d/00-proxy",
        name: "system/proxy/http host",
        value: "proxy.corp",
      },
      {
        source: "gnome_defaults",
        path: "/etc/dconf/db/local.d/00-proxy",
        name: "system/proxy/http port",
        value: "3128",
      },
      {
        source: "gnome_defaults",
        path: "/etc/dconf/db/local.d/00-proxy",
        name: "system/proxy/http authentication-user",
        value: "[masked]",
      },
      {
        source: "gnome_defaults",
        path: "/etc/dconf/db/local.d/00-proxy",
        name: "system/proxy/http authentication-password",
        value: "[masked]",
      },
    ]);
    expect(r.pac).toEqual([
      { path: "/etc/environment.d/90-proxy.conf", name: "auto_proxy", value: "http://wpad.corp/wpad.dat" },
      {
        path: "/etc/dconf/db/local.d/00-proxy",
        name: "system/proxy autoconfig-url",
        value: "http://pac.corp/proxy.pac",
      },
    ]);
    expect(r.unread.map((u) => u.source)).toEqual(["gnome_user"]);
    expect(JSON.stringify(r)).not.toMatch(/s3cret|hunter2|pw123|alice|bob|carol|dave|letmein/);
  });

  it("answers empty lists for a root without any of the files", async () => {
    const r = await readSystemProxies(`${root.dir}/nowhere`, new AbortController().signal);
    expect(r.settings).toEqual([]);
    expect(r.pac).toEqual([]);
  });

  it("splits systemd's quoted DefaultEnvironment words", () => {
    expect(parseDefaultEnvironment("DefaultEnvironment=\"A=1 2\" B=3 'C=x'\n#DefaultEnvironment=D=4")).toEqual([
      ["A", "1 2"],
      ["B", "3"],
      ["C", "x"],
    ]);
  });
});
