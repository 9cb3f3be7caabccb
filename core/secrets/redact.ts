/**
 * Secrets kept out of what is shown, logged or sent: the API key (`redact`)
 * and the secrets in the environment. Commands the agent runs inherit the
 * user's environment, so `env`, `printenv` or `echo $GITHUB_TOKEN` would
 * print tokens into the command output, and from there into the trajectory
 * and the next request to the model. `secretRedactor` returns a function that
 * masks the values of the variables whose names look secret; the agent
 * applies it (combined with `redact`) to every trajectory line and to every
 * tool result the model is sent.
 */
import { maskUrlsIn } from './endpoint';

/** A name segment (between `_`s, or the whole name) that says the value is a secret. */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRETS?|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|PRIVATE|PAT)(?:_|$)/i;

/** Well-known secrets, named whatever the pattern above says of them. */
export const KNOWN_SECRET_NAMES: ReadonlySet<string> = new Set([
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GITLAB_TOKEN',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'HF_TOKEN',
  'HUGGING_FACE_HUB_TOKEN',
  'HUGGINGFACEHUB_API_TOKEN',
  'WANDB_API_KEY',
  'NPM_TOKEN',
  'LAR_API_KEY',
  'DATABASE_URL',
]);

/**
 * A last segment that says the value is where a secret is, or a setting
 * about it, not the secret (SSH_AUTH_SOCK, GNUPG_PRIVATE_DIR, TOKEN_FILE,
 * AUTH_MODE): masking those would only blank ordinary paths and words.
 */
const NOT_SECRET_SUFFIX =
  /_(?:SOCK|SOCKET|DIR|PATH|FILE|HOST|PORT|MODE|TYPE|METHOD|PROVIDER|ALGORITHM|TTL|TIMEOUT|EXPIRY)$/i;

/** Values shorter than this are not masked: `1`, `true` or `dev` would blank ordinary output. */
export const MIN_SECRET_LENGTH = 8;

export const SECRET_MASK = '***';

/** Names that end in a password or hold a connection string (PGPASSWORD, MYSQL_PWD, DB_CONNECTION_STRING); not PWD, the folder. */
const SECRET_END = /(?:PASSWORD|PASSWD|PASSPHRASE|_PWD|CONNECTION_?STRING|CONN_?STR)$/i;

export function looksSecret(name: string): boolean {
  if (KNOWN_SECRET_NAMES.has(name.toUpperCase())) return true;
  return (SECRET_NAME.test(name) || SECRET_END.test(name)) && !NOT_SECRET_SUFFIX.test(name);
}

export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The texts to mask for an environment: each secret value, trimmed too, and
 * as it reads inside a JSON string (a value with `"`, `\` or control
 * characters is escaped in a trajectory line, and must be found there too).
 */
export function secretNeedles(env: Environment): string[] {
  return needlesOf(
    Object.entries(env).flatMap(([name, value]) => (typeof value === 'string' && looksSecret(name) ? [value] : [])),
    MIN_SECRET_LENGTH,
  );
}

/** Each value, trimmed too, and as it reads inside a JSON string, when at least `min` characters long. */
function needlesOf(values: readonly string[], min: number): string[] {
  const out = new Set<string>();
  for (const value of values)
    for (const v of [value, value.trim()]) {
      if (v.length < min) continue;
      out.add(v);
      out.add(JSON.stringify(v).slice(1, -1));
    }
  return [...out];
}

/**
 * A redactor of values known to be credentials (an MCP server's token, a password input): from `min`
 * characters (4: a short PIN the user typed is still a secret), raw and as they read in a JSON string.
 */
export function valuesRedactor(values: readonly string[], min = 4, mask = SECRET_MASK): (text: string) => string {
  return needleRedactor(needlesOf(values, min), mask);
}

/**
 * A function that replaces every secret value of `env` in a text by `***`;
 * the identity when there is none. Occurrences that overlap or touch (two
 * secrets sharing characters, a value repeated) are masked as one stretch, so
 * no part of either is left showing.
 */
export function secretRedactor(env: Environment, mask = SECRET_MASK): (text: string) => string {
  return needleRedactor(secretNeedles(env), mask);
}

function needleRedactor(needles: readonly string[], mask: string): (text: string) => string {
  if (needles.length === 0) return (text) => text;
  return (text) => {
    const found: [start: number, end: number][] = [];
    for (const n of needles)
      for (let i = text.indexOf(n); i !== -1; i = text.indexOf(n, i + 1)) found.push([i, i + n.length]);
    if (found.length === 0) return text;
    found.sort((a, b) => a[0] - b[0]);
    let out = '';
    let at = 0;
    let [start, end] = found[0]!;
    for (const [s, e] of found) {
      if (s <= end) {
        end = Math.max(end, e);
        continue;
      }
      out += text.slice(at, start) + mask;
      at = end;
      [start, end] = [s, e];
    }
    return out + text.slice(at, start) + mask + text.slice(end);
  };
}

/** Applies redactors one after the other. */
export function combineRedactors(...redactors: ((text: string) => string)[]): (text: string) => string {
  return (text) => redactors.reduce((t, r) => r(t), text);
}

/** Removes anything that looks like the API key from a message before it is shown or logged. */
export function redact(text: string, secret: string | undefined): string {
  let out = secret && secret.length >= 4 ? text.split(secret).join('***') : text;
  out = out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, '$1***').replace(/\bsk-[A-Za-z0-9_-]{8,}/g, 'sk-***');
  // Credentials in a URL (http://user:password@host/…, ?api_key=…), e.g. inside a network error.
  return maskUrlsIn(out);
}

/**
 * JSON data with every string in it, object keys included, passed through `redact` one by one, so a
 * mask never reaches across a value into the next key, as masking the JSON text would. A number
 * the redactor would mask is written as the masked text.
 */
export function redactJsonStrings(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (typeof value === 'number') {
    const masked = redact(String(value));
    return masked === String(value) ? value : masked;
  }
  // What JSON.stringify would write for it (a Date's text), redacted.
  if (typeof (value as { toJSON?: unknown } | null)?.toJSON === 'function')
    return redactJsonStrings((value as { toJSON(): unknown }).toJSON(), redact);
  if (Array.isArray(value)) return value.map((x) => redactJsonStrings(x, redact));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [redact(k), redactJsonStrings(x, redact)]));
  return value;
}
