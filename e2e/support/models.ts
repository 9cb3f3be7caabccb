/**
 * What the model-picker scenario reads off the chat: whether anything scrolls sideways or is cut at the side
 * bar's edge, and the header of the run a workspace recorded.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { eventually } from './workbench';

/** How far the chat's page (and its footer) is wider than its view, and which of these elements end past its right edge. */
export async function overflowOf(
  chat: FrameLocator,
  selectors: string[],
): Promise<{ extra: number; footerExtra: number; width: number; cut: string[] }> {
  return chat.locator('html').evaluate((html, sels) => {
    const doc = html.ownerDocument;
    const root = doc.scrollingElement ?? html;
    const width = root.clientWidth;
    const cut = sels.filter((s) => {
      const e = doc.querySelector(s);
      if (!e) return true;
      const r = e.getBoundingClientRect();
      return r.width === 0 || r.left < 0 || r.right > width + 0.5;
    });
    const footer = doc.querySelector('footer');
    const footerExtra = footer ? footer.scrollWidth - footer.clientWidth : -1;
    return { extra: root.scrollWidth - width, footerExtra, width, cut };
  }, selectors);
}

/** The header (line 1) of the workspace's one run, once the run has ended. */
export async function endedRunHeader(ws: string): Promise<{ model?: Record<string, unknown> }> {
  const runs = join(ws, '.lar', 'runs');
  const file = await eventually(
    'the run file ended',
    () => {
      const f = readdirSync(runs).find((n) => n.endsWith('.lar.jsonl'));
      if (!f) return undefined;
      const last = readFileSync(join(runs, f), 'utf8').trimEnd().split('\n').at(-1)!;
      return /"type":"end"/.test(last) ? f : undefined;
    },
    60_000,
  );
  return JSON.parse(readFileSync(join(runs, file), 'utf8').split('\n')[0]!) as { model?: Record<string, unknown> };
}
