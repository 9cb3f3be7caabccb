/**
 * The Changes card at a run's end as the e2e scenarios read it: a file's row by its path, its buttons, and
 * whether the card fits the side bar without scrolling sideways.
 */
import type { FrameLocator, Locator } from 'playwright-core';

/** The latest Changes card of the chat. */
export function changesCard(chat: FrameLocator): Locator {
  return chat.locator('.run-changes').last();
}

/** The row of `path` in a card. */
export function fileRow(card: Locator, path: string): Locator {
  return card.locator('.review-file').filter({ hasText: path });
}

/** The paths a card lists, in order. */
export function listedPaths(card: Locator): Promise<string[]> {
  return card.locator('.review-path').allInnerTexts();
}

/** How far a card's content and its buttons overflow the card sideways (0: they fit). */
export function sidewaysOverflow(card: Locator): Promise<number> {
  return card.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const over = [...el.querySelectorAll('button')].map((b) => b.getBoundingClientRect().right - box.right);
    return Math.max(0, el.scrollWidth - el.clientWidth, ...over);
  });
}
