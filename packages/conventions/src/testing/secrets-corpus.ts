/**
 * Secrets as they really appear, for every masker to be run against (issue 18, finding 5): each sample is a
 * line as a journal, a process's command line, a header value or a proxy setting shows it, and the secret in
 * it that must never come out. Beside them, lines that are not secrets and must stay readable. Shared by the
 * kernel's masking tests and the servers' (the proxy values' own masker), so a form added here is checked
 * everywhere at once.
 */

export interface SecretSample {
  /** What the form is (the test's label). */
  form: string;
  /** The text as it would be shown unmasked. */
  text: string;
  /** The part that must not survive masking. */
  secret: string;
  /** A command line (its words are a process's argv) rather than a line of text. */
  command?: boolean;
}

const PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";

/** Lines (free text or command lines) holding a secret. */
export const SECRET_SAMPLES: readonly SecretSample[] = [
  {
    form: "URL userinfo in a journal line",
    text: "connecting to postgres://bob:Pw9xq77@db.internal/app failed",
    secret: "Pw9xq77",
  },
  {
    form: "URL userinfo, password with / and #",
    text: "using https://svc:a/b#c9Zq@api.example/v1",
    secret: "a/b#c9Zq",
  },
  {
    form: "--auth-key before its value (attacker review)",
    text: "tailscale up --auth-key 0123456789abcdef0123",
    secret: "0123456789abcdef0123",
    command: true,
  },
  { form: "curl -u", text: "curl -u alice:Hunter2pw https://api.example/", secret: "Hunter2pw", command: true },
  { form: "curl --user", text: "curl --user alice:Hunter3pw https://api.example/", secret: "Hunter3pw", command: true },
  {
    form: "wget --user/--password",
    text: "wget --user bob --password Wg3tPass https://f.example/x",
    secret: "Wg3tPass",
    command: true,
  },
  {
    form: "wget --password=",
    text: "wget --user=bob --password=Wg4tPass https://f.example/x",
    secret: "Wg4tPass",
    command: true,
  },
  {
    form: "docker login -p",
    text: "docker login -u ci -p D0ckerPw registry.example",
    secret: "D0ckerPw",
    command: true,
  },
  {
    form: "docker login --password",
    text: "docker login --username ci --password D0ckPw2 reg.example",
    secret: "D0ckPw2",
    command: true,
  },
  { form: "--pw=", text: "backup-tool --host db --pw=Pw0nly9 --verbose", secret: "Pw0nly9", command: true },
  {
    form: "openssl -passin pass:",
    text: "openssl rsa -in k.pem -passin pass:Op3nSsl -out k2.pem",
    secret: "Op3nSsl",
    command: true,
  },
  {
    form: "openssl -passout pass:",
    text: "openssl genrsa -aes256 -passout pass:Op4nSsl 2048",
    secret: "Op4nSsl",
    command: true,
  },
  {
    form: "ldapsearch -w",
    text: "ldapsearch -x -D cn=admin -w LdapPw7 -b dc=example",
    secret: "LdapPw7",
    command: true,
  },
  { form: "smbclient -U user%pw", text: "smbclient //fs/share -U alice%SmbPw88", secret: "SmbPw88", command: true },
  { form: "sqlcmd -P", text: "sqlcmd -S db -U sa -P SqlPw9x -Q select", secret: "SqlPw9x", command: true },
  {
    form: "mosquitto_pub -P",
    text: "mosquitto_pub -h mq -u dev -P MqttPw5 -t a -m b",
    secret: "MqttPw5",
    command: true,
  },
  { form: "htpasswd -b", text: "htpasswd -b /etc/nginx/.htpasswd alice HtPw4me", secret: "HtPw4me", command: true },
  { form: "htpasswd -bc", text: "htpasswd -bc /etc/apache2/.htpasswd alice HtPw5me", secret: "HtPw5me", command: true },
  {
    form: "--password PW inside a text line",
    text: "job started: sync --password S3cretLine --to s3",
    secret: "S3cretLine",
  },
  { form: "key = value with spaces", text: "password = KvPass11", secret: "KvPass11" },
  { form: "api_key = value with spaces", text: "config: api_key = Ak9ey00 loaded", secret: "Ak9ey00" },
  { form: "secret : value", text: "client_secret : Cs8ecret", secret: "Cs8ecret" },
  {
    form: "PEM private key",
    text: `key loaded: -----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`,
    secret: PEM_BODY,
  },
  {
    form: "PEM RSA private key, cut before its end",
    text: `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}`,
    secret: PEM_BODY,
  },
  {
    form: "GitHub token",
    text: "push with ghp_16C7e42F292c6912E7710c838347Ae178B4a failed",
    secret: "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
  },
  {
    form: "GitHub fine-grained token",
    text: "GH=github_pat_11ABCDEFG0123456789_abcdefghijKLMNOP",
    secret: "github_pat_11ABCDEFG0123456789_abcdefghijKLMNOP",
  },
  {
    form: "Slack bot token",
    text: "slack: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    secret: "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
  },
  {
    form: "AWS secret access key alone",
    text: "creds wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY in use",
    secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  },
  {
    form: "AWS secret as a variable",
    text: "AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    secret: "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
  },
  { form: "Bearer token", text: "Authorization: Bearer abcDEF123.token", secret: "abcDEF123.token" },
  // The attacker's second review: user:password after -u for programs other than curl, and a header split
  // over argv elements (an unquoted `-H Authorization: Bearer <token>`).
  { form: "wget -u user:pw", text: "wget -u alice:Wg5uPass https://f.example/x", secret: "Wg5uPass", command: true },
  { form: "-u user:pw, any program", text: "ftpsync -u alice:Fs5yncPw ftp.example", secret: "Fs5yncPw", command: true },
  {
    form: "--user user:pw, any program",
    text: "svnsync --user alice:Sv9nPass https://svn.example/",
    secret: "Sv9nPass",
    command: true,
  },
  { form: "--user=user:pw", text: "rclone ls --user=alice:Rc1onePw remote:", secret: "Rc1onePw", command: true },
  { form: "lftp -u user,pw", text: "lftp -u alice,Lf7tpPw sftp://files.example", secret: "Lf7tpPw", command: true },
  {
    form: "bearer token split across argv",
    text: "curl -H Authorization: Bearer 9f8e7d6c5b4a3928170 https://api.example/",
    secret: "9f8e7d6c5b4a3928170",
    command: true,
  },
  {
    form: "secret header split across argv, no scheme",
    text: "curl -H X-Api-Key: Xk3yValue1 https://api.example/",
    secret: "Xk3yValue1",
    command: true,
  },
  { form: "token= in a query", text: "GET /cb?token=Tk5abc&x=1", secret: "Tk5abc" },
  // Stop 23's attacker review: forms process_info still showed.
  { form: "sshpass -p glued", text: "sshpass -pSsh9Glued ssh admin@host", secret: "Ssh9Glued", command: true },
  {
    form: "sshpass inside ssh's ProxyCommand",
    text: "ssh -o ProxyCommand=sshpass -p Pr0xyCmdPw ssh -W %h:%p jump host",
    secret: "Pr0xyCmdPw",
    command: true,
  },
  {
    form: "openssl enc -k",
    text: "openssl enc -aes256 -k Ossl3nckey -in a -out b",
    secret: "Ossl3nckey",
    command: true,
  },
  {
    form: "aws configure set a secret key",
    text: "aws configure set aws_secret_access_key Aws9SecretValue1",
    secret: "Aws9SecretValue1",
    command: true,
  },
  { form: "az login -p", text: "az login -u alice@corp.example -p Az9LoginPw", secret: "Az9LoginPw", command: true },
  {
    form: "nmcli wifi password",
    text: "nmcli dev wifi connect HomeNet password Wifi9Passw0rd",
    secret: "Wifi9Passw0rd",
    command: true,
  },
  { form: "wpa_passphrase", text: "wpa_passphrase HomeNet Wpa9Passphrase", secret: "Wpa9Passphrase", command: true },
  { form: "--bearer value", text: "client --bearer Br9TokenValue1 --url x", secret: "Br9TokenValue1", command: true },
  {
    form: "vault token (hvs.)",
    text: "vault login hvs.CAESIJ3xZm9rZXZhdWx0dG9rZW5leGFtcGxl",
    secret: "hvs.CAESIJ3xZm9rZXZhdWx0dG9rZW5leGFtcGxl",
    command: true,
  },
  {
    form: "Hugging Face token",
    text: "HF token hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    secret: "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
  },
  {
    form: "Stripe live key",
    text: "using sk_live_51HxAbCdEfGhIjKlMnOpQrSt in prod",
    secret: "sk_live_51HxAbCdEfGhIjKlMnOpQrSt",
  },
  {
    form: "DigitalOcean token",
    text: "doctl auth init -t dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    secret: "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    command: true,
  },
  {
    form: "SendGrid key",
    text: "key SG.AbCdEfGhIjKlMnOpQrStUv.WxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz012",
    secret: "SG.AbCdEfGhIjKlMnOpQrStUv.WxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz012",
  },
  // Left by stop 23's attacker review (F4): a word after --password-stdin, --key with the key itself, and -P/-p
  // as a password for programs where it is not a port (ssh, scp, rsync and mysql keep -P/-p readable, below).
  {
    form: "a word after --password-stdin",
    text: "docker login --username ci --password-stdin Pst9Secret",
    secret: "Pst9Secret",
    command: true,
  },
  {
    form: "--key with the key itself",
    text: "backup --key Rk7kEyVaLuE42 --repo x",
    secret: "Rk7kEyVaLuE42",
    command: true,
  },
  {
    form: "ipmitool -P",
    text: "ipmitool -I lanplus -H 10.0.0.9 -U admin -P Ipm1Pass chassis status",
    secret: "Ipm1Pass",
    command: true,
  },
  { form: "tsql -P", text: "tsql -S db -U sa -P Tsq1Pass", secret: "Tsq1Pass", command: true },
  { form: "mongosh -p", text: "mongosh -u admin -p M0ngoPw1 mongodb://db/app", secret: "M0ngoPw1", command: true },
  { form: "rdesktop -p", text: "rdesktop -u admin -p Rd9Pass host.example", secret: "Rd9Pass", command: true },
  {
    form: "snmpwalk -A (SNMPv3 auth passphrase)",
    text: "snmpwalk -v3 -l authPriv -u mon -a SHA -A Snmp9Auth -x AES -X Snmp9Priv 10.0.0.1",
    secret: "Snmp9Auth",
    command: true,
  },
  {
    form: "snmpwalk -X (SNMPv3 privacy passphrase)",
    text: "snmpwalk -v3 -l authPriv -u mon -a SHA -A Snmp9Auth -x AES -X Snmp9Priv 10.0.0.1",
    secret: "Snmp9Priv",
    command: true,
  },
  // The sealed attacker review of stop 24 (F4): argv forms process_info still showed, each fixed by a row of the
  // command table (runtime/mask-commands.ts) or a generic rule.
  {
    form: "ipmitool -PX glued",
    text: "ipmitool -H bmc -U admin -PIpm2Glued power status",
    secret: "Ipm2Glued",
    command: true,
  },
  { form: "mongo -pX glued", text: "mongo -u admin -pM0ngoGlued9 admin", secret: "M0ngoGlued9", command: true },
  {
    form: "snmpget -AX glued",
    text: "snmpget -v3 -u mon -l authNoPriv -a SHA -ASnmpGlued9 10.0.0.1 sysUpTime.0",
    secret: "SnmpGlued9",
    command: true,
  },
  {
    form: "snmpget -XX glued",
    text: "snmpget -v3 -u mon -l authPriv -x AES -XSnmpPrivG9 10.0.0.1 sysUpTime.0",
    secret: "SnmpPrivG9",
    command: true,
  },
  {
    form: "ldapsearch -wX glued",
    text: "ldapsearch -x -D cn=admin -wLdapGlued7 -b dc=example",
    secret: "LdapGlued7",
    command: true,
  },
  { form: "sqlcmd -PX glued", text: "sqlcmd -S db -U sa -PSqlGlued9 -Q select", secret: "SqlGlued9", command: true },
  {
    form: "snmpget -c community",
    text: "snmpget -v2c -c C0mmunity9 10.0.0.1 sysDescr.0",
    secret: "C0mmunity9",
    command: true,
  },
  { form: "snmpwalk -cX glued", text: "snmpwalk -v2c -cC0mmGlued9 10.0.0.1", secret: "C0mmGlued9", command: true },
  {
    form: "podman login -p",
    text: "podman login -u ci -p P0dmanPw9 registry.example",
    secret: "P0dmanPw9",
    command: true,
  },
  {
    form: "buildah login -p",
    text: "buildah login -u ci -p Bu1ldahPw9 registry.example",
    secret: "Bu1ldahPw9",
    command: true,
  },
  {
    form: "skopeo login -p",
    text: "skopeo login -u ci -p Sk0peoPw9 registry.example",
    secret: "Sk0peoPw9",
    command: true,
  },
  {
    form: "docker login -pX glued",
    text: "docker login -u ci -pD0ckGlued9 reg.example",
    secret: "D0ckGlued9",
    command: true,
  },
  {
    form: "nerdctl login -p",
    text: "nerdctl login -u ci -p N3rdctlPw9 reg.example",
    secret: "N3rdctlPw9",
    command: true,
  },
  {
    form: "helm registry login -p",
    text: "helm registry login reg.example -u ci -p H3lmPw9",
    secret: "H3lmPw9",
    command: true,
  },
  {
    form: "skopeo --creds user:pass",
    text: "skopeo copy --creds ci:Sk0Creds9 docker://a/b docker://c/d",
    secret: "Sk0Creds9",
    command: true,
  },
  {
    form: "skopeo --src-creds",
    text: "skopeo copy --src-creds ci:SrcCr3ds9 --dest-creds ci:DstCr3ds9 docker://a/b docker://c/d",
    secret: "SrcCr3ds9",
    command: true,
  },
  {
    form: "skopeo --dest-creds",
    text: "skopeo copy --src-creds ci:SrcCr3ds9 --dest-creds ci:DstCr3ds9 docker://a/b docker://c/d",
    secret: "DstCr3ds9",
    command: true,
  },
  { form: "vault login <token>", text: "vault login 0a1b2c3dVaultTok9", secret: "0a1b2c3dVaultTok9", command: true },
  {
    form: "vault login legacy s. token",
    text: "vault login s.Vt9okenLegacy1",
    secret: "s.Vt9okenLegacy1",
    command: true,
  },
  {
    form: "xfreerdp /p:",
    text: "xfreerdp /v:host.example /u:admin /p:Rdp9Passw0rd",
    secret: "Rdp9Passw0rd",
    command: true,
  },
  {
    form: "smbclient positional password",
    text: "smbclient //fs/share Smb9Positional -U alice",
    secret: "Smb9Positional",
    command: true,
  },
  { form: "isql DSN user PASS", text: "isql MyDSN alice Is9qlPass", secret: "Is9qlPass", command: true },
  { form: "--bind-pw", text: "sssctl --bind-pw B1ndPw9 --domain corp", secret: "B1ndPw9", command: true },
  {
    form: "a value starting with - after --password",
    text: "app --password -Xdash9Pw --verbose",
    secret: "-Xdash9Pw",
    command: true,
  },
  { form: "--password -- X", text: "app --password -- Dd9AfterDashes", secret: "Dd9AfterDashes", command: true },
  { form: "7z -pX", text: "7z x -pSevenZ9pw backup.7z", secret: "SevenZ9pw", command: true },
  { form: "zip -P", text: "zip -P Zip9Pass out.zip notes.txt", secret: "Zip9Pass", command: true },
  { form: "ssh-keygen -N", text: "ssh-keygen -t ed25519 -N NewPhr9 -f key", secret: "NewPhr9", command: true },
  { form: "sqlplus user/password", text: "sqlplus -s scott/T1gerPw9@orcl", secret: "T1gerPw9", command: true },
  {
    form: "curl -uuser:pw glued",
    text: "curl -ualice:Cu9Glued https://api.example/",
    secret: "Cu9Glued",
    command: true,
  },
  { form: "ldappasswd -s", text: "ldappasswd -x -D cn=admin -W -s New9Pw uid=bob", secret: "New9Pw", command: true },
  { form: "useradd -p (a password hash)", text: "useradd -m -p Hash9Value bob", secret: "Hash9Value", command: true },
  { form: "wpa_cli set_network psk", text: "wpa_cli set_network 0 psk Wpa9Cli", secret: "Wpa9Cli", command: true },
  { form: "cqlsh -p", text: "cqlsh -u cassandra -p Cql9Pass db.example", secret: "Cql9Pass", command: true },
  { form: "rabbitmqctl add_user", text: "rabbitmqctl add_user bob Rmq9Pass", secret: "Rmq9Pass", command: true },
  {
    form: "mc alias set (MinIO secret key)",
    text: "mc alias set minio http://127.0.0.1:9000 minioadmin Mc9SecretKey",
    secret: "Mc9SecretKey",
    command: true,
  },
  { form: "mysql inside sudo", text: "sudo mysql -uroot -pSu9doMy app", secret: "Su9doMy", command: true },
  // F5: journal lines the service server showed.
  {
    form: "journal: attached -pX in a command line",
    text: "backup.sh[311]: running mysqldump -uroot -pMyDump9 app",
    secret: "MyDump9",
  },
  {
    form: "journal: ipmitool -PX",
    text: "cron[9]: ipmitool -H bmc -U admin -PIpmiText9 power status",
    secret: "IpmiText9",
  },
  { form: "journal: ldapsearch -wX", text: "sssd: ran ldapsearch -x -wLdT9ext -b dc=x", secret: "LdT9ext" },
  { form: "journal: snmpget -c", text: "poller: snmpget -v2c -c Snm9Comm 10.0.0.1 ifInOctets.1", secret: "Snm9Comm" },
  { form: 'journal: api_key: "X"', text: 'config loaded: api_key: "Ak9Quoted"', secret: "Ak9Quoted" },
  { form: "journal: access_key: 'X'", text: "s3: access_key: 'Ac9Quoted'", secret: "Ac9Quoted" },
  { form: 'journal: "password": "X"', text: 'payload {"user": "bob", "password": "Js9nSpaced"}', secret: "Js9nSpaced" },
  {
    form: "journal: 'password': 'X' (a dict)",
    text: "payload {'user': 'bob', 'password': 'Py9Dict'}",
    secret: "Py9Dict",
  },
  { form: "journal: token='X' with a space", text: "app: token='Tk9 two words'", secret: "two words" },
  { form: 'journal: password="X Y"', text: 'login password="correct horse Bat9"', secret: "horse Bat9" },
  { form: "journal: X-Pass: header line", text: "X-Pass: Xp9Header", secret: "Xp9Header" },
  { form: "journal: X-Access-Key: header line", text: "request headers: X-Access-Key: Ak9Access", secret: "Ak9Access" },
  { form: "journal: X-Client-Key: header line", text: "X-Client-Key: Ck9Client sent", secret: "Ck9Client" },
  { form: "journal: X-Key in a quoted -H", text: 'curl -H "X-Key: Xk9Curl" https://api.example/', secret: "Xk9Curl" },
  { form: "journal: Cookie: line", text: "Cookie: _gh_sess=Gh9Sess; theme=dark", secret: "Gh9Sess" },
  { form: "journal: with password 'X'", text: "login attempt with password 'Pr9Quoted' rejected", secret: "Pr9Quoted" },
  { form: "journal: password is X", text: "the password is Pr9IsValue, keep it safe", secret: "Pr9IsValue" },
  { form: 'journal: password for bob is "X"', text: 'password for bob is "Pw9Quoted2"', secret: "Pw9Quoted2" },
  { form: "journal: password was set to X", text: "vpn: password was set to Pw9SetTo", secret: "Pw9SetTo" },
  { form: 'journal: (password: "X")', text: 'smtp auth failed for bob (password: "Sm9Quoted")', secret: "Sm9Quoted" },
  { form: 'journal: Bearer "X"', text: 'sent Authorization: Bearer "Br9Quoted"', secret: "Br9Quoted" },
  { form: "journal: Bearer%20X", text: "callback authorization=Bearer%20Tk9Encoded&x=1", secret: "Tk9Encoded" },
  {
    form: "journal: Authorization: Negotiate",
    text: "Authorization: Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnag9",
    secret: "YIIGhgYGKwYBBQUCoIIGejCCBnag9",
  },
  {
    form: "journal: Proxy-Authorization: Digest",
    text: 'Proxy-Authorization: Digest username="bob", response="Dg9Resp"',
    secret: "Dg9Resp",
  },
  {
    form: "journal: URL userinfo, password with @",
    text: "mirror https://bob:p@ss9W0rd@mirror.example/",
    secret: "ss9W0rd",
  },
  {
    form: "journal: wget --password -X",
    text: "cron: wget --password -Dash9Pw https://f.example/x",
    secret: "Dash9Pw",
  },
  { form: "journal: --bind-pw", text: "sssd: --bind-pw B1nd9Text given", secret: "B1nd9Text" },
  {
    form: "journal: docker login -p",
    text: "deploy: docker login -u ci -p D0ck9Text reg.example",
    secret: "D0ck9Text",
  },
  { form: "journal: xfreerdp /p:", text: "rdp: xfreerdp /u:admin /p:Rdp9Text /v:host", secret: "Rdp9Text" },
];

/** Proxy settings whose credentials must not be shown (the value as an env var or a config file holds it). */
export const PROXY_SAMPLES: readonly SecretSample[] = [
  { form: "proxy with userinfo", text: "http://alice:Px1pass@proxy.corp:3128", secret: "Px1pass" },
  { form: "proxy without a scheme", text: "alice:Px2pass@proxy.corp:3128", secret: "Px2pass" },
  { form: "proxy password holding #", text: "http://alice:Px#3pass@proxy.corp:3128", secret: "Px#3pass" },
  { form: "proxy password holding /", text: "http://alice:Px/4pass@proxy.corp:3128/", secret: "Px/4pass" },
  { form: "proxy password holding / and #, no scheme", text: "bob:a#b/Px5@proxy.corp:8080", secret: "a#b/Px5" },
  { form: "proxy password holding ?", text: "http://alice:Px?6pass@proxy.corp:3128", secret: "Px?6pass" },
];

/** Lines that hold no secret and must come out exactly as they went in. */
export const READABLE_SAMPLES: readonly string[] = [
  "https://status.example/report?code=302",
  "redirected with ?code=200 from the health page",
  "ssh -p 2222 host.example",
  "docker run -p 8080:80 nginx",
  "docker run -u 1000:1000 alpine id",
  "sudo -u alice systemctl --user status",
  "curl -H Accept: text/html https://api.example/",
  "wget -w 5 https://f.example/file",
  "curl -I https://api.example/",
  "Started Session 42 of User alice.",
  "/usr/lib/systemd/system/ssh.service",
  "Accepted publickey for alice from 192.0.2.7 port 52114 ssh2",
  "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  "-----BEGIN CERTIFICATE-----",
  // -P and -p as ports, and --key naming a key file (ADR 0034): shown as they are.
  "scp -P 2222 notes.txt host.example:/tmp/",
  "mysql -h db -P 3306 -u app",
  "rsync -P src/ host.example:dst/",
  "mongosh --port 27017 mongodb://db/app",
  "openssl req -new -key host.key -out host.csr",
  "curl --key /etc/ssl/private/client.pem https://api.example/",
  "client --key client.pem --cert client.crt",
  // Stop 24's review: programs and journal lines that hold no secret.
  "ssh -p 22 host.example",
  "ls -la /var/log",
  "grep -c foo notes.txt",
  "podman run -p 8080:80 img",
  "vault status",
  "rabbitmqctl list_users",
  "mc ls minio/bucket",
  "usermod -aG docker bob",
  "xfreerdp /v:host.example /u:admin",
  "smbclient -L fs -U alice",
  "isql -v MyDSN",
  "sqlplus /nolog",
  "snmpwalk -v2c -Cr10 -On 10.0.0.1",
  "zip -r out.zip dir",
  "app --password-file /run/secrets/pw",
  "password changed for user bob",
  "Accepted password for bob from 192.0.2.7 port 52114 ssh2",
  "Failed password for invalid user admin from 192.0.2.9 port 4242 ssh2",
  "pam_unix(sshd:session): session opened for user root(uid=0) by (uid=0)",
  "the password is incorrect for user bob",
  "password for user bob expires in 5 days",
  "systemd-logind[411]: New session 3 of user bob.",
  "sshd[88]: Server listening on 0.0.0.0 port 22.",
  "kernel: usb 1-1: new high-speed USB device number 2 using xhci_hcd",
  "nginx: GET /api/items?page=2 HTTP/1.1 200",
  "X-Frame-Options: DENY",
  "Cache-Control: no-cache",
  "Link: <https://x>; rel=next",
  "Bearer token missing in request",
];
