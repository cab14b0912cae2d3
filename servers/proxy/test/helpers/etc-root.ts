/** A throwaway root with the system files proxy_env_status reads, written by the test (removed after). */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface EtcRoot {
  dir: string;
  close(): Promise<void>;
}

export async function makeEtcRoot(files: Record<string, string>): Promise<EtcRoot> {
  const dir = await mkdtemp(join(tmpdir(), "rn-proxy-root-"));
  for (const [path, text] of Object.entries(files)) {
    const full = join(dir, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
  }
  return { dir, close: () => rm(dir, { recursive: true, force: true }) };
}

/** A corporate laptop's files: every place a proxy hides, with credentials to be masked. */
export const CORP_FILES: Record<string, string> = {
  "etc/environment": 'PATH="/usr/bin"\nhttp_proxy="http://alice:s3cret@proxy.corp:3128"\nNO_PROXY=localhost,.corp\n',
  "etc/environment.d/90-proxy.conf":
    "# proxy for user sessions\nHTTPS_PROXY=alice:s3cret@proxy.corp:3128\nauto_proxy=http://wpad.corp/wpad.dat\n",
  "etc/systemd/system.conf": '[Manager]\nDefaultEnvironment="http_proxy=http://bob:hunter2@proxy.corp:8080" LANG=C\n',
  "etc/apt/apt.conf.d/95proxy":
    'Acquire::http::Proxy "http://carol:pw123@apt-proxy.corp:3142";\nAcquire::https::Proxy::deb.example "DIRECT";\n// Acquire::ftp::Proxy "http://commented.corp";\n',
  "etc/apt/apt.conf": 'Acquire::http { Proxy "http://nested.corp:3128"; };\n',
  "etc/dconf/db/local.d/00-proxy":
    "[system/proxy]\nmode='auto'\nautoconfig-url='http://pac.corp/proxy.pac'\n\n[system/proxy/http]\nhost='proxy.corp'\nport=3128\nauthentication-user='dave'\nauthentication-password='letmein'\n\n[org/gnome/desktop/interface]\nclock-format='24h'\n",
};
