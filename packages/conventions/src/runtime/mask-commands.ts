/**
 * Which words of a command line are a secret for the programs that take one in their own way: a short option
 * that is a password for this program only (`-P` is a port for ssh and mysql, a password for ipmitool), glued
 * values (`-pX`), `/p:X`, positional passwords (`smbclient //srv/share PW`, `vault login TOKEN`). One table, read
 * by argv masking and by text masking alike (a command line inside a journal line is masked by the same rows).
 * Options every program shares (`--password X`, `NAME=X`, `-u user:pw`) are the generic rules in mask.ts.
 */

export const MASK = "[masked]";

interface Rules {
  /** Options whose next word is the secret, whatever it looks like. */
  next?: readonly string[];
  /** Short options whose value may be glued on (`-pX`); a bare one is not followed by its value (it prompts). */
  glued?: readonly string[];
  /** Arguments whose text after this prefix is the secret (`/p:X`). */
  prefixed?: readonly string[];
  /** Positional words (1 = the first after the program, or after the subcommand) that are secrets. */
  positional?: readonly number[];
  /** Options with a separate value, so that their value is not counted as a positional word. */
  takesValue?: readonly string[];
  /** The positional word after a positional one matching this is the secret (smbclient's after the service). */
  after?: RegExp;
  /** The last word is the secret when an option matching this is present (htpasswd -b file user PW). */
  lastWhen?: RegExp;
  /** The secret's value is `user<sep>secret`: the user stays. */
  userSep?: string;
  /** Options whose value is `file:password` (curl's `-E client.pem:PW`): after the first `:`; a file alone stays. */
  paired?: readonly string[];
  /** Options whose value is a script of this program's own commands (`lftp -e "open -u bob,PW host"`). */
  script?: readonly string[];
  /** A value that names no secret where one could stand (rar's `-p-`: no password; net's `*`: prompt for it). */
  notSecret?: RegExp;
  /** Words starting with `/` are options, not positional words (Windows' `net use … /user:bob PW`). */
  slashOptions?: boolean;
}

interface CommandRule extends Rules {
  /** Rules that hold only under a subcommand (docker's -p publishes a port except in `docker login`). */
  sub?: Readonly<Record<string, Rules>>;
  /** The subcommand is among the first this many words (`net use`, `net rpc user add`), not anywhere. */
  subWithin?: number;
}

const sameRule = (names: readonly string[], rule: CommandRule): Record<string, CommandRule> =>
  Object.fromEntries(names.map((n) => [n, rule]));

const LOGIN_P: CommandRule = { sub: { login: { next: ["-p"], glued: ["-p"] } } };
const SNMP: CommandRule = { next: ["-A", "-X", "-c"], glued: ["-A", "-X", "-c"] };
const SQL_P: CommandRule = { next: ["-P"], glued: ["-P"] };
const MONGO: CommandRule = { next: ["-p"], glued: ["-p"] };
const LDAP: CommandRule = { next: ["-w"], glued: ["-w"] };
const FREERDP: CommandRule = { prefixed: ["/p:", "/password:", "/gp:", "/pth:"] };
// RAR's -p and -hp (headers encrypted too) glued; `-p-` says there is no password.
const RAR: CommandRule = { glued: ["-p", "-hp"], notSecret: /^-$/ };
/**
 * Windows' `net use [Z:] \\srv\share PW /user:bob` and `net user bob PW /add`, with `*` for "prompt"; Samba's
 * `net rpc user add bob PW`, `net rpc password bob PW` (its `-U user%PW` is the generic rule's).
 */
const NET: CommandRule = {
  subWithin: 3,
  slashOptions: true,
  notSecret: /^\*$/,
  takesValue: ["-U", "-S", "-W", "-I", "-p", "-w"],
  sub: {
    add: { positional: [2] },
    password: { positional: [2] },
    use: { after: /^(\\\\|\/\/)/ },
    user: { positional: [2] },
  },
};

/** The table: a program's basename → how it takes its secrets. */
const COMMAND_RULES: Readonly<Record<string, CommandRule>> = {
  // MySQL clients: `-pX` glued (a bare -p prompts; the word after it is a database). -P is the port.
  ...sameRule(
    ["mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mariadb", "mariadb-dump"],
    { glued: ["-p"] },
  ),
  sshpass: { next: ["-p"], glued: ["-p"] },
  openssl: { next: ["-k"] },
  az: { next: ["-p"] },
  nmcli: { next: ["password", "wifi-sec.psk", "802-11-wireless-security.psk"] },
  aws: { next: ["aws_secret_access_key", "aws_session_token"] },
  "redis-cli": { next: ["-a"] },
  // curl's -u user:password (the user stays), glued too (`-ualice:pw`).
  curl: {
    next: ["-u", "--user", "-U", "--proxy-user"],
    glued: ["-u", "-U"],
    userSep: ":",
    paired: ["-E", "--cert", "--proxy-cert"],
  },
  ngrok: { sub: { authtoken: { positional: [1] }, "add-authtoken": { positional: [1] } } },
  // Consul's and Nomad's gossip encryption key (`-encrypt=K`, `-encrypt K`).
  ...sameRule(["consul", "nomad"], { next: ["-encrypt"] }),
  // lftp's -u user,password, also inside the scripts -e and -c run (`open -u bob,PW host; user bob PW`).
  lftp: {
    next: ["-u"],
    userSep: ",",
    script: ["-e", "-c"],
    subWithin: 1,
    sub: { user: { positional: [2], userSep: undefined } },
  },
  ...sameRule(["docker", "podman", "buildah", "skopeo", "nerdctl"], LOGIN_P),
  helm: { sub: { login: { next: ["-p"] } } },
  ...sameRule(["ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldapcompare", "ldapmodrdn"], LDAP),
  ldappasswd: { next: ["-w", "-a", "-s"], glued: ["-w", "-a", "-s"] },
  // -P as a password (not a port as for ssh, scp, rsync or mysql): SQL Server, FreeTDS, ODBC, IPMI, MQTT, zip.
  ...sameRule(["sqlcmd", "bcp", "osql", "tsql", "mosquitto_pub", "mosquitto_sub", "mosquitto_rr"], SQL_P),
  ipmitool: { next: ["-P", "-k", "-y"], glued: ["-P"] },
  // unixODBC's isql DSN USER PASSWORD; Sybase's isql -P.
  isql: { next: ["-P"], glued: ["-P"], positional: [3] },
  ...sameRule(["zip", "unzip", "zipcloak"], { next: ["-P"] }),
  ...sameRule(["7z", "7za", "7zr"], { glued: ["-p"] }),
  ...sameRule(["rar", "unrar"], RAR),
  net: NET,
  "ssh-keygen": { next: ["-N", "-P"] },
  ...sameRule(
    ["mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop"],
    MONGO,
  ),
  rdesktop: { next: ["-p"], glued: ["-p"] },
  ...sameRule(["ncftp", "ncftpget", "ncftpput", "ncftpls"], { next: ["-p"] }),
  // net-snmp: v3 auth and privacy passphrases (-a and -x, the algorithms, stay), v1/v2c community.
  ...sameRule(
    [
      "snmpwalk",
      "snmpget",
      "snmpgetnext",
      "snmpbulkwalk",
      "snmpbulkget",
      "snmpset",
      "snmptable",
      "snmpdelta",
      "snmpstatus",
      "snmptrap",
      "snmpinform",
      "snmpdf",
      "snmptest",
    ],
    SNMP,
  ),
  ...sameRule(["xfreerdp", "xfreerdp3", "wlfreerdp", "sdl-freerdp", "sdl-freerdp3", "wfreerdp"], FREERDP),
  smbclient: { after: /^(\/\/|\\\\)/, takesValue: ["-U", "-W", "-I", "-p", "-m", "-A", "-c", "-D", "-s", "-l", "-d"] },
  ...sameRule(["vault", "bao"], { sub: { login: { positional: [1] } } }),
  // Oracle's user/password[@db].
  sqlplus: { positional: [1], userSep: "/" },
  wpa_passphrase: { positional: [2] },
  wpa_cli: { next: ["psk", "password", "wep_key0"] },
  // A password hash is a secret too (it can be cracked offline).
  ...sameRule(["useradd", "usermod"], { next: ["-p"], glued: ["-p"] }),
  // Cassandra's shell: -p is the password.
  cqlsh: { next: ["-p"] },
  rabbitmqctl: { sub: { add_user: { positional: [2] }, change_password: { positional: [2] } } },
  // MinIO's client: `mc alias set NAME URL ACCESS_KEY SECRET_KEY`.
  mc: { sub: { set: { positional: [4] } } },
  htpasswd: { lastWhen: /^-[A-Za-z]*b/ },
};

/** The basename of a program word (`/usr/bin/mysql` → mysql). */
export function programOf(word: string): string {
  return word.split("/").pop() ?? "";
}

/** Whether the table has a rule for this program (text masking looks for these names). */
export function hasCommandRule(program: string): boolean {
  return Object.hasOwn(COMMAND_RULES, program);
}

/** Every program the table names, for text masking's search. */
export const RULED_PROGRAMS: readonly string[] = Object.keys(COMMAND_RULES);

/**
 * `user<sep>secret` → `user<sep>[masked]`; a value with no separator is the whole secret, or, where the program
 * takes `user<sep>secret`, a user alone (`lftp -u bob host`, `curl -u bob`: the password is asked for).
 */
function maskedValue(value: string, sep: string | undefined): string {
  if (!sep) return MASK;
  const at = value.indexOf(sep);
  if (at < 0) return value;
  return at > 0 ? `${value.slice(0, at + sep.length)}${MASK}` : MASK;
}

/** The rules in force for these words: the program's, with its subcommand's when that word is present. */
function rulesFor(words: readonly string[]): { rules: Rules; start: number } | undefined {
  const rule = COMMAND_RULES[programOf(words[0] ?? "")];
  if (!rule) return undefined;
  for (const [name, extra] of Object.entries(rule.sub ?? {})) {
    const at = words.indexOf(name, 1);
    if (at > 0 && at <= (rule.subWithin ?? words.length)) return { rules: { ...rule, ...extra }, start: at };
  }
  return { rules: rule, start: 0 };
}

/**
 * A script given to an option (`lftp -e "open -u bob,PW host; user bob PW"`): each of its commands (split at
 * `;`) masked word by word by the same program's rules; the spacing and separators stay as they were.
 */
function maskScript(program: string, script: string): string {
  return script
    .split(/(;)/)
    .map((command, c) => {
      if (c % 2 === 1) return command;
      const parts = command.split(/(\s+)/);
      const words = parts.filter((_, k) => k % 2 === 0);
      // A command's first word is its name, as a subcommand is after a program (a leading space: an empty word).
      const masked = maskCommandWords([program, ...words.filter(Boolean)]);
      let w = 1;
      return parts.map((p, k) => (k % 2 === 1 || p === "" ? p : (masked[w++] ?? p))).join("");
    })
    .join("");
}

/**
 * Mask the words (words[0] is the program) the program's rule says are secrets; words it does not name come back
 * as they were. `--` ends options: words after it count as positional whatever they start with.
 */
export function maskCommandWords(words: readonly string[]): string[] {
  const found = rulesFor(words);
  const out = [...words];
  if (!found) return out;
  const { rules, start } = found;
  let position = 0;
  let optionsEnded = false;
  // The positional word before this one (smbclient's service, options between them skipped).
  let previous = "";
  for (let i = 1; i < words.length; i++) {
    const word = words[i] ?? "";
    if (word === MASK) continue;
    const next = rules.next?.includes(word) && i >= start;
    if (next && i + 1 < words.length) {
      const value = words[i + 1] ?? "";
      if (!rules.notSecret?.test(value)) out[i + 1] = maskedValue(value, rules.userSep);
      i += 1;
      continue;
    }
    if (rules.script?.includes(word) && i + 1 < words.length) {
      out[i + 1] = maskScript(words[0] ?? "", words[i + 1] ?? "");
      i += 1;
      continue;
    }
    const glued = rules.glued?.find((g) => word.startsWith(g) && word.length > g.length && !word.startsWith("--"));
    if (glued && i >= start && !word.startsWith(`${glued}${MASK}`)) {
      const value = word.slice(glued.length);
      if (!rules.notSecret?.test(value)) out[i] = `${glued}${maskedValue(value, rules.userSep)}`;
      continue;
    }
    const prefix = rules.prefixed?.find((p) => word.toLowerCase().startsWith(p) && word.length > p.length);
    if (prefix) {
      out[i] = `${word.slice(0, prefix.length)}${MASK}`;
      continue;
    }
    const paired = rules.paired?.find((o) => word === o || word.startsWith(`${o}=`));
    if (paired) {
      const glued = word.startsWith(`${paired}=`);
      const at = glued ? i : i + 1;
      const value = glued ? word.slice(paired.length + 1) : (words[at] ?? "");
      // Windows' `C:\…` is a drive, not a file and a password.
      const colon = value.search(/(?<!^[A-Za-z]):/);
      if (colon > 0) out[at] = `${glued ? `${paired}=` : ""}${value.slice(0, colon)}:${MASK}`;
      i = at;
      continue;
    }
    const eq = rules.next?.find((o) => o.startsWith("-") && word.startsWith(`${o}=`));
    if (eq) {
      out[i] = `${eq}=${maskedValue(word.slice(eq.length + 1), rules.userSep)}`;
      continue;
    }
    if (word === "--" && !optionsEnded) {
      optionsEnded = true;
      continue;
    }
    const slashOption = rules.slashOptions && word.startsWith("/") && !word.startsWith("//");
    if (!optionsEnded && (word.startsWith("-") || slashOption)) {
      if (rules.takesValue?.includes(word)) i += 1;
      continue;
    }
    if (i <= start || word.includes("=")) continue;
    position += 1;
    // A positional `user/password` with no user part (`sqlplus /nolog`) is not one.
    const userless = rules.userSep !== undefined && !(word.indexOf(rules.userSep) > 0);
    const secret = !rules.notSecret?.test(word);
    if (rules.positional?.includes(position) && !userless && secret) out[i] = maskedValue(word, rules.userSep);
    if (rules.after?.test(previous) && secret) out[i] = MASK;
    previous = word;
  }
  if (rules.lastWhen && words.some((w) => rules.lastWhen?.test(w)) && words.length > 2) {
    out[out.length - 1] = MASK;
  }
  return out;
}
