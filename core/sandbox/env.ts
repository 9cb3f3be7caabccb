/**
 * The environment a sandboxed command gets: built from a short list, never
 * inherited, so no token, key or socket path of the user's session reaches
 * it (the API key included, whatever it is called).
 */
import { proxyEnv } from './forwarder';

/**
 * Names taken from the host when set: where programs are, language and time,
 * the terminal, and where toolchains and certificate bundles are (paths, not
 * secrets; a proxy variable may carry a password, so none is taken).
 */
const TAKEN = [
  'PATH',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
  'JAVA_HOME',
  'GOROOT',
  'GOPATH',
  'GOBIN',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'RUSTUP_TOOLCHAIN',
  'VIRTUAL_ENV',
  'CONDA_PREFIX',
  'CONDA_DEFAULT_ENV',
  'PYENV_ROOT',
  'PYENV_VERSION',
  'NVM_DIR',
  'NVM_BIN',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
];

export interface SandboxEnvOptions {
  host: Readonly<Record<string, string | undefined>>;
  /** The home folder inside (an empty private folder at the host's home path). */
  home: string;
  shell: string;
  /** The user's git name and email: ~/.gitconfig is not in the sandbox, and commits made inside are theirs. */
  identity?: { name?: string; email?: string };
  /** The network is the allowlist's proxy (forwarder.ts): HTTP clients are pointed at it. */
  proxy?: boolean;
}

export function sandboxEnv(o: SandboxEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of TAKEN) {
    const v = o.host[k];
    if (typeof v === 'string' && v !== '') env[k] = v;
  }
  for (const [k, v] of Object.entries(o.host)) if (/^LC_[A-Z_]+$/.test(k) && typeof v === 'string') env[k] = v;
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.HOME = o.home;
  env.SHELL = o.shell;
  env.TMPDIR = '/tmp';
  env.TERM = 'xterm-256color';
  env.PAGER = 'cat';
  env.GIT_PAGER = 'cat';
  // Tools that ask (git's credential prompt, ssh's host key prompt) must fail instead of waiting.
  env.GIT_TERMINAL_PROMPT = '0';
  if (o.identity?.name) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = o.identity.name;
  if (o.identity?.email) env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = o.identity.email;
  if (o.proxy) Object.assign(env, proxyEnv());
  env.LAR_SANDBOX = 'bubblewrap';
  return env;
}
