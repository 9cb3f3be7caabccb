/**
 * Where the workbench shows that an approval waits, outside the chat: our activity-bar item's badge, our status bar
 * item and a notification toast. Selectors read from VS Code 1.139's DOM (code-server).
 */
import type { Locator, Page } from 'playwright-core';

/** Our view container's activity-bar item (its label may carry the badge's text after the title). */
export function activityItem(page: Page): Locator {
  return page
    .locator('.part.activitybar .action-item')
    .filter({ has: page.locator('a.action-label[aria-label^="Lean4 Agentic"]') });
}

/** The number on our activity-bar item, or undefined when it has none (the badge is hidden or absent). */
export async function activityBadge(page: Page): Promise<string | undefined> {
  const content = activityItem(page).locator('.badge .badge-content');
  if ((await content.count()) === 0 || !(await content.first().isVisible())) return undefined;
  const text = (await content.first().innerText()).trim();
  return text === '' ? undefined : text;
}

/** Our status bar item while it says it waits for the user. */
export function waitingStatus(page: Page): Locator {
  return page.locator('.statusbar-item', { hasText: 'waiting for you' });
}

/** The notification toasts that ask for an approval. */
export function approvalToast(page: Page): Locator {
  return page.locator('.notifications-toasts .notification-toast', { hasText: 'waits for your approval' });
}
