// The Debian packages setup installs: what the build, the tests, the demo and
// the benchmarks run (test/devtools/setup.test.ts checks each program's package is here).
export const DEBIAN_PACKAGES = [
  'build-essential', // node-pty's native addon
  'python3', // node-gyp
  'git',
  'procps', // ps and pgrep: the terminal finds and reaps what a command started
  'tmux', // the terminal benchmark compares against tmux
  'zsh', // the terminal drives the user's shell: its tests run each kind it supports
  'fish',
  'bubblewrap', // bwrap: every command the agent runs is confined in it (core/sandbox)
  'chromium', // the end-to-end tests drive it with playwright-core
  'libkrb5-dev', // code-server's native build
  'fonts-dejavu-core', // readable screenshots
];
