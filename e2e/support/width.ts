/**
 * The chat at a given width: the side bar resized as a user does it (dragging its edge), and the checks
 * that what a user sees fits: nothing scrolls sideways, every button is whole, in view and not covered.
 */
import type { FrameLocator, Page } from 'playwright-core';

/** The side bar's width on screen, in CSS pixels. */
export async function sideBarWidth(page: Page): Promise<number> {
  const box = await page.locator('.part.sidebar').boundingBox();
  if (!box) throw new Error('the side bar is not shown');
  return Math.round(box.width);
}

/**
 * Drags the side bar's edge (the workbench's vertical sash on its right border) until the side bar is
 * `target` px wide, give or take a few: the workbench snaps and clamps, so the drag is corrected and repeated.
 */
export async function setSideBarWidth(page: Page, target: number): Promise<number> {
  for (let attempt = 0; attempt < 4; attempt++) {
    const bar = await page.locator('.part.sidebar').boundingBox();
    if (!bar) throw new Error('the side bar is not shown');
    if (Math.abs(bar.width - target) <= 4) return Math.round(bar.width);
    const edge = bar.x + bar.width;
    const sashes = await page.locator('.monaco-sash.vertical').evaluateAll((els) =>
      els.map((e) => {
        const r = e.getBoundingClientRect();
        return { x: r.left + r.width / 2, top: r.top, bottom: r.bottom, shown: r.width > 0 && r.height > 0 };
      }),
    );
    const sash = sashes.find(
      (s) => s.shown && Math.abs(s.x - edge) <= 4 && s.top <= bar.y + 10 && s.bottom >= bar.y + bar.height - 10,
    );
    if (!sash) throw new Error(`no sash on the side bar's edge at x=${edge}: ${JSON.stringify(sashes)}`);
    const y = bar.y + bar.height / 2;
    await page.mouse.move(sash.x, y);
    await page.mouse.down();
    await page.mouse.move(sash.x + (target - bar.width) / 2, y, { steps: 5 });
    await page.mouse.move(sash.x + (target - bar.width), y, { steps: 5 });
    await page.mouse.up();
    // Off the sash, so the screenshots do not show it highlighted.
    await page.mouse.move(bar.x + target + 200, y);
    await page.waitForTimeout(300);
  }
  return sideBarWidth(page);
}

/** What does not fit in the chat frame, in words (empty when everything does). */
export async function layoutProblems(chat: FrameLocator): Promise<string[]> {
  return chat.locator('body').evaluate(async (body) => {
    const problems: string[] = [];
    // Two frames: the scroll listeners have run (the ↓ Latest button shows or hides) and the layout is drawn.
    const settle = () => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
    const name = (e: Element) =>
      `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.trim().replace(/\s+/g, '.')}` : ''}${e.textContent ? ` "${e.textContent.trim().slice(0, 30)}"` : ''}`;
    const doc = document.scrollingElement ?? document.documentElement;
    const sideways = [doc, body, ...Array.from(document.querySelectorAll('.wrap, header, #log, #history, footer'))];
    for (const e of sideways)
      if (e.scrollWidth > e.clientWidth)
        problems.push(`${name(e)} scrolls sideways (${e.scrollWidth} > ${e.clientWidth})`);
    const view = { right: document.documentElement.clientWidth, bottom: document.documentElement.clientHeight };
    const shown = (b: HTMLElement) => b.getClientRects().length > 0 && getComputedStyle(b).visibility !== 'hidden';
    /** The box a button must lie in: the frame, and the visible part (no scrollbar) of its scrolling panel. */
    const clip = (b: Element) => {
      const scroller = b.closest('#log, #history');
      if (!scroller) return { left: 0, top: 0, ...view };
      const r = scroller.getBoundingClientRect();
      return {
        left: r.left + scroller.clientLeft,
        top: r.top + scroller.clientTop,
        right: Math.min(view.right, r.left + scroller.clientLeft + scroller.clientWidth),
        bottom: Math.min(view.bottom, r.top + scroller.clientTop + scroller.clientHeight),
      };
    };
    const check = (b: HTMLElement) => {
      const r = b.getBoundingClientRect();
      const c = clip(b);
      if (r.left < c.left - 0.5 || r.right > c.right + 0.5 || r.top < c.top - 0.5 || r.bottom > c.bottom + 0.5)
        problems.push(
          `${name(b)} is cut off: [${r.left},${r.right}]x[${r.top},${r.bottom}] outside [${c.left},${c.right}]x[${c.top},${c.bottom}]`,
        );
      else {
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        if (!hit || !b.contains(hit)) problems.push(`${name(b)} is covered by ${hit ? name(hit) : 'nothing'}`);
      }
      if (b.scrollWidth > b.clientWidth + 1) problems.push(`${name(b)}'s label is clipped`);
    };
    const buttons = Array.from(document.querySelectorAll('button')).filter(shown);
    // The buttons outside the log and the history first, with the log as the reader left it.
    for (const b of buttons.filter((b) => !b.closest('#log, #history'))) check(b);
    // Then each one in a scrolling panel, brought to the middle of it as a reader would scroll to it.
    for (const b of buttons.filter((b) => b.closest('#log, #history'))) {
      const scroller = b.closest('#log, #history')!;
      const r = b.getBoundingClientRect();
      const s = scroller.getBoundingClientRect();
      scroller.scrollTop += r.top + r.height / 2 - (s.top + s.height / 2);
      await settle();
      check(b);
    }
    // Scrolled up, the ↓ Latest button shows over the log: it too must be whole and uncovered.
    const log = document.getElementById('log');
    if (log && log.scrollHeight - log.clientHeight > 64) {
      log.scrollTop = 0;
      await settle();
      const jump = document.getElementById('jump');
      if (jump && shown(jump)) check(jump);
      else problems.push('the log was scrolled up but ↓ Latest is not shown');
    }
    if (log) log.scrollTop = log.scrollHeight;
    await settle();
    return problems;
  });
}
