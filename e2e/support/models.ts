/**
 * What the model-picker scenario reads off the chat: whether anything scrolls sideways or is cut at the side
 * bar's edge, and the headers of the runs a workspace recorded.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';

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

/** The header (line 1, written when the run starts) of each run the workspace recorded, oldest first. */
export function runHeaders(ws: string): { model?: Record<string, unknown> }[] {
  const runs = join(ws, '.lar', 'runs');
  return readdirSync(runs)
    .filter((n) => n.endsWith('.lar.jsonl'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(runs, f), 'utf8').split('\n')[0]!) as { model?: Record<string, unknown> });
}
