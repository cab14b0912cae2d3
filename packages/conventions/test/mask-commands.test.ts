/**
 * Regression (stop 24's attacker review, F4 and F5): argv masking let 21 of 127 forms through (values glued to
 * their option, `snmpget -c`, `podman login -p`, `skopeo --creds`, `vault login TOKEN`, `xfreerdp /p:`,
 * positional passwords, `--bind-pw`, a value starting with `-`, `--password -- X`), and journal text 17 of 30
 * (the same command lines inside a line, quoted values, header-style lines, prose). The corpus
 * (secrets-corpus.ts) checks that no secret survives; these rows pin what is shown, so the words around a
 * secret stay readable.
 */
import { READABLE_SAMPLES, SECRET_SAMPLES } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { MASK, maskArgv, maskCommandLine, maskText } from "../src/runtime/mask.ts";

const M = MASK;

describe("argv: the command table and the generic rules", () => {
  it.each([
    ["ipmitool -H bmc -U admin -PIpm2 power status", `ipmitool -H bmc -U admin -P${M} power status`],
    ["mongo -u admin -pM0ngo admin", `mongo -u admin -p${M} admin`],
    ["snmpget -v3 -a SHA -AAuth9 -x AES -XPriv9 10.0.0.1", `snmpget -v3 -a SHA -A${M} -x AES -X${M} 10.0.0.1`],
    ["snmpget -v2c -c Comm9 10.0.0.1 sysDescr.0", `snmpget -v2c -c ${M} 10.0.0.1 sysDescr.0`],
    ["ldapsearch -x -D cn=admin -wLdap9 -b dc=x", `ldapsearch -x -D cn=admin -w${M} -b dc=x`],
    ["sqlcmd -S db -U sa -PSql9 -Q select", `sqlcmd -S db -U sa -P${M} -Q select`],
    ["podman login -u ci -p Pod9 reg.example", `podman login -u ci -p ${M} reg.example`],
    ["skopeo login -u ci -pSko9 reg.example", `skopeo login -u ci -p${M} reg.example`],
    ["skopeo copy --src-creds ci:S9 --dest-creds=ci:D9 a b", `skopeo copy --src-creds ${M} --dest-creds=${M} a b`],
    ["vault login Tok9en", `vault login ${M}`],
    ["xfreerdp /v:host /u:admin /p:Rdp9", `xfreerdp /v:host /u:admin /p:${M}`],
    ["smbclient //fs/share Smb9 -U alice", `smbclient //fs/share ${M} -U alice`],
    ["smbclient -U alice -W corp //fs/share Smb9", `smbclient -U alice -W corp //fs/share ${M}`],
    ["smbclient //fs/share -W corp Smb9", `smbclient //fs/share -W corp ${M}`],
    ["isql MyDSN alice Isql9", `isql MyDSN alice ${M}`],
    ["sqlplus -s scott/Tiger9@orcl", `sqlplus -s scott/${M}`],
    ["app --bind-pw Bind9 --domain corp", `app --bind-pw ${M} --domain corp`],
    ["app --password -Dash9 --verbose", `app --password ${M} --verbose`],
    ["app --password -- Dashes9", `app --password -- ${M}`],
    ["sudo mysql -uroot -pSudo9 app", `sudo mysql -uroot -p${M} app`],
    ["timeout 5 ipmitool -PIpmi9 power status", `timeout 5 ipmitool -P${M} power status`],
    ["curl -ualice:Curl9 https://api.example/", `curl -ualice:${M} https://api.example/`],
    // The red team's review of the table (argv 24/216 leaked): what stays readable beside the secret.
    ["curl -E client.pem:Cert9 https://api.example/", `curl -E client.pem:${M} https://api.example/`],
    ["curl --cert=client.pem:Cert9 https://api.example/", `curl --cert=client.pem:${M} https://api.example/`],
    ["ngrok config add-authtoken Ngr9tok", `ngrok config add-authtoken ${M}`],
    ["consul agent -encrypt=Gos9 -server", `consul agent -encrypt=${M} -server`],
    ["nomad agent -encrypt Gos9 -server", `nomad agent -encrypt ${M} -server`],
    ["app --hmac-key Hm9 --port 80", `app --hmac-key ${M} --port 80`],
    ["app --otp 493817 --user bob", `app --otp ${M} --user bob`],
    ["app bob:Bare9pw https://api.example/", `app bob:${M} https://api.example/`],
    // Stop 26's sealed review through process_info (3 leaks, 1 over-masked of 70).
    ["rar a -hpRar9 b.rar docs", `rar a -hp${M} b.rar docs`],
    ["unrar x -pUnr9 b.rar", `unrar x -p${M} b.rar`],
    ["net use \\\\fs\\share /user:bob Net9", `net use \\\\fs\\share /user:bob ${M}`],
    ["net use Z: \\\\fs\\share Net9 /user:corp\\bob", `net use Z: \\\\fs\\share ${M} /user:corp\\bob`],
    ["net user bob Net9 /add", `net user bob ${M} /add`],
    ["net rpc user add bob Net9 -U admin", `net rpc user add bob ${M} -U admin`],
    ["net rpc password bob Net9 -S dc", `net rpc password bob ${M} -S dc`],
    ["openssl enc -aes256 -pass pass:Os9 -in a", `openssl enc -aes256 -pass pass:${M} -in a`],
    ["tool Basic Ym9iOkJhc2ljOVB3", `tool Basic ${M}`],
    ["tool Bearer Tk9.x --verbose", `tool Bearer ${M} --verbose`],
  ])("%s", (line, shown) => {
    expect(maskArgv(line.split(" ")).join(" ")).toBe(shown);
  });

  it.each([
    "ssh -p 22 host.example",
    "scp -P 2222 notes.txt host.example:/tmp/",
    "rsync -P src/ host.example:dst/",
    "mysql -h db -P 3306 -u app",
    "mongosh --port 27017 mongodb://db/app",
    "ls -la /var/log",
    "grep -c foo notes.txt",
    "docker run -p 8080:80 nginx",
    "podman run -p 8080:80 img",
    "vault login -method=userpass username=bob",
    "smbclient -L fs -U alice",
    "sqlplus /nolog",
    "app --password --verbose x",
    "docker login --password-stdin -u ci reg.example",
    "git log --author=bob",
    "sshd -o PasswordAuthentication=no",
    "curl -E client.pem https://api.example/",
    "docker run node:20-alpine",
    "docker run nginx:latest",
    "app --spin 3",
    "openssl s_client -connect host.example:443 -pass env:NOTSECRET",
    "openssl pkcs12 -in c.p12 -passin file:/run/pw -passout fd:3",
    "openssl enc -d -pass stdin -in b.enc",
    "unrar x -p- b.rar",
    "net use Z: \\\\fs\\share * /user:bob",
    "net use Z: /delete",
    "lftp -u bob sftp://files.example",
    "curl -u alice https://api.example/",
    "app Bearer token missing",
  ])("%s stays readable", (line) => {
    expect(maskArgv(line.split(" ")).join(" ")).toBe(line);
  });

  // The argv /proc shows: a script after `lftp -e` is one word holding spaces, masked by lftp's own rules.
  it.each([
    [
      ["lftp", "-e", "open -u bob,Lft9 ftp.example"],
      ["lftp", "-e", `open -u bob,${M} ftp.example`],
    ],
    [
      ["lftp", "-c", "open -u bob,Lft9 sftp://h;  mirror /pub /tmp/pub"],
      ["lftp", "-c", `open -u bob,${M} sftp://h;  mirror /pub /tmp/pub`],
    ],
    [
      ["lftp", "-e", "set net:timeout 5; mirror /pub /tmp/pub", "ftp.example"],
      ["lftp", "-e", "set net:timeout 5; mirror /pub /tmp/pub", "ftp.example"],
    ],
    [
      ["lftp", "-c", "user bob Lft9; open ftp.example"],
      ["lftp", "-c", `user bob ${M}; open ftp.example`],
    ],
    [
      ["net", "use", "\\\\fs\\share", "/user:bob", "Net9"],
      ["net", "use", "\\\\fs\\share", "/user:bob", M],
    ],
    [
      ["net", "use", "//fs/share", "/user:bob", "Net9"],
      ["net", "use", "//fs/share", "/user:bob", M],
    ],
  ])("%j", (argv, shown) => {
    expect(maskArgv(argv)).toEqual(shown);
    expect(maskCommandLine(argv)).toBe(shown.join(" "));
  });

  it("a word masked once is not masked again with a stray bracket (`-p[masked]]`)", () => {
    expect(maskCommandLine("rar a -pRar9 b.rar")).toBe(`rar a -p${M} b.rar`);
    expect(maskCommandLine("lftp -u bob,Lft9 h")).toBe(`lftp -u bob,${M} h`);
    expect(maskText(`mysql -uroot -p${M}, then`)).toBe(`mysql -uroot -p${M}, then`);
  });
});

describe("journal text: the same command lines, quoted values, header lines, prose", () => {
  it.each([
    ["backup.sh[311]: running mysqldump -uroot -pDump9 app", `backup.sh[311]: running mysqldump -uroot -p${M} app`],
    ['sh -c "mysql -uroot -pQuo9"', `sh -c "mysql -uroot -p${M}"`],
    ['config loaded: api_key: "Key9"', `config loaded: api_key: ${M}`],
    ["payload {'user': 'bob', 'password': 'Py9'}", `payload {'user': 'bob', 'password': '${M}'}`],
    ["app: token='two words9'", `app: token=${M}`],
    ["X-Pass: Xp9 sent", `X-Pass: ${M} sent`],
    ['curl -H "X-Key: Xk9" https://api.example/', `curl -H "X-Key: ${M}" https://api.example/`],
    ["login attempt with password 'Pr9' rejected", `login attempt with password '${M}' rejected`],
    ["the password is Pr9Is, keep it", `the password is ${M}, keep it`],
    ['sent Authorization: Bearer "Br9"', `sent Authorization: Bearer ${M}`],
    ["callback authorization=Bearer%20Tk9&x=1", `callback authorization=Bearer%20${M}&x=1`],
    ['Proxy-Authorization: Digest username="bob", response="Dg9"', `Proxy-Authorization: ${M}`],
    ["mirror https://bob:p@ss9@mirror.example/", `mirror https://${M}@mirror.example/`],
    // The red team's review of the table (text 21/69 leaked).
    ["invalid password Ip9 for user bob", `invalid password ${M} for user bob`],
    ["login bob/Lg9 failed", `login bob/${M} failed`],
    ["GET /cb?code=Oc9x&state=s1 HTTP/1.1", `GET /cb?code=${M}&state=s1 HTTP/1.1`],
    ["<password>Xm9</password>", `<password>${M}</password>`],
    ["body password%3DEnc9%26x%3D1", `body password%3D${M}%26x%3D1`],
  ])("%s", (line, shown) => {
    expect(maskText(line)).toBe(shown);
  });

  it("the corpus holds at least 30 forms of text and 10 ordinary journal lines", () => {
    expect(SECRET_SAMPLES.filter((s) => s.command !== true).length).toBeGreaterThanOrEqual(30);
    expect(
      READABLE_SAMPLES.filter((t) => /^[\w.-]+(\[\d+\])?: |password|session/i.test(t)).length,
    ).toBeGreaterThanOrEqual(10);
  });
});
