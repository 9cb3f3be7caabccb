import { readFileSync, writeFileSync } from 'node:fs';
import { arch, cpus, platform, totalmem } from 'node:os';

export function machineLine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${platform()} ${arch()}, Node ${process.version}`;
}

/** Replaces the text between `<!-- BENCH:NAME:start -->` and its end marker (appending both if absent). */
export function writeSection(doc: string, name: string, body: string): void {
  let text: string;
  try {
    text = readFileSync(doc, 'utf8');
  } catch {
    text = '# Performance\n';
  }
  const start = `<!-- BENCH:${name}:start -->`;
  const end = `<!-- BENCH:${name}:end -->`;
  const section = `${start}\n${body}\n${end}`;
  const re = new RegExp(`${start}[\\s\\S]*${end}`);
  writeFileSync(doc, re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}\n`);
}
