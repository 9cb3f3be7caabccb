/**
 * The real VS Code (code-server) in a real browser (Debian's Chromium driven
 * by playwright-core), with our VSIX installed: one code-server and one
 * browser for the suite, a page per scenario. Selectors are the ones measured
 * to hold on VS Code 1.139 (../shared notes on e2e).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import { CodeServer } from '../../devtools/code-server';
import { DEMO_MODEL } from '../../devtools/demo-model';
import { REPO_ROOT, chromiumPath, codeServerCommand } from '../../devtools/paths';

export const ARTIFACTS = join(REPO_ROOT, 'out', 'e2e-artifacts');

export function vsixPath(): string {
  const { name, version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  return join(REPO_ROOT, 'out', 'vsix', `${name}-linux-x64-${version}.vsix`);
}

/** Why the suite cannot run here, or undefined when it can. */
export function missingPrerequisite(): string | undefined {
  if (process.platform !== 'linux') return `end-to-end tests run on Linux (this is ${process.platform})`;
  if (!codeServerCommand()) return 'code-server is not installed: run `npm run setup`';
  if (!chromiumPath()) return 'Chromium is not installed (/usr/bin/chromium): run `npm run setup`';
  if (!existsSync(vsixPath())) return `no VSIX at ${vsixPath()}: run \`npm run package -- --target linux-x64\``;
  return undefined;
}

/** The workspace settings of a scenario: the model server to use and the demo repository's workflow. */
export const settingsFor = (endpoint: string, model = DEMO_MODEL) => ({
  'lean4Agentic.endpoint': endpoint,
  'lean4Agentic.model': model,
  'lean4Agentic.workflow': 'demo.larflow.json',
});

export class Suite {
  private constructor(
    readonly server: CodeServer,
    readonly browser: Browser,
    private readonly dir: string,
  ) {}

  static async start(): Promise<Suite> {
    const dir = mkdtempSync(join(tmpdir(), 'lar-e2e-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    const logLines: string[] = [];
    const server = await CodeServer.start({
      dataDir: join(dir, 'code-server'),
      extensions: [vsixPath()],
      log: (l) => logLines.push(l),
    });
    try {
      const browser = await chromium.launch({
        executablePath: chromiumPath()!,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      return new Suite(server, browser, dir);
    } catch (e) {
      await server.stop();
      throw e;
    }
  }

  /** A copy of the demo repository (or an empty folder) with these workspace settings. */
  workspace(
    name: string,
    settings: Record<string, unknown>,
    from: string | undefined = join(REPO_ROOT, 'test-fixtures', 'demo-workspace'),
  ): string {
    const ws = join(this.dir, 'workspaces', name);
    rmSync(ws, { recursive: true, force: true });
    if (from) cpSync(from, ws, { recursive: true });
    mkdirSync(join(ws, '.vscode'), { recursive: true });
    writeFileSync(join(ws, '.vscode', 'settings.json'), JSON.stringify(settings, null, 2));
    return ws;
  }

  async open(folder: string): Promise<Workbench> {
    // The clipboard as a user's browser gives it to VS Code (Copy in the chat writes it through the workbench).
    const page = await this.browser.newPage({
      viewport: { width: 1600, height: 1000 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(this.server.folderUrl(folder));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    return new Workbench(page, errors);
  }

  async stop(): Promise<void> {
    await this.browser.close().catch(() => {});
    await this.server.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class Workbench {
  constructor(
    readonly page: Page,
    readonly pageErrors: string[],
  ) {}

  /**
   * Opens the Lean4 Agentic view and waits for the chat's script to be running.
   * Through the extension's own command, not the activity bar: a click on an
   * item whose view the workbench has just restored closes the side bar again.
   * A webview's frame is the slowest and most variable part of a start (up to
   * tens of seconds on a loaded machine), so a chat that has not come up is
   * asked for once more before the test fails (with a screenshot).
   */
  async openChat(): Promise<FrameLocator> {
    const chat = this.chat();
    for (let attempt = 1; ; attempt++) {
      await this.runCommand('Lean4 Agentic: Open Agent Chat');
      try {
        await chat.locator('#task').waitFor({ timeout: 45_000 });
        return chat;
      } catch (e) {
        if (attempt === 2) {
          await this.screenshot('open-chat-failed').catch(() => {});
          throw e;
        }
      }
    }
  }

  /**
   * Runs a command by its title from the command palette. Right after the
   * workbench loads, an extension's commands reach the palette only once its
   * contributions are read, and an open palette does not list what arrives
   * later: it is closed and opened again until the command is there.
   */
  async runCommand(title: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const input = this.page.locator('.quick-input-widget input');
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    for (;;) {
      await this.press('F1');
      try {
        await input.waitFor({ timeout: 10_000 });
        // Inside the retry: right after a start or a reload, the workbench may close the palette again
        // (a view restored takes the focus) or hold it inert for a moment, and it is opened once more.
        await input.fill(`>${title}`, { timeout: 5_000 });
        await row.waitFor({ timeout: 5_000 });
        await row.click();
        return;
      } catch (e) {
        if (Date.now() > deadline) {
          await this.screenshot('command-palette-failed').catch(() => {});
          throw e;
        }
        await this.page.keyboard.press('Escape');
      }
    }
  }

  chat(): FrameLocator {
    return this.page
      .frameLocator('iframe.webview.ready[src*="extensionId=lean4-agentic.lean4-agentic"]')
      .frameLocator('iframe#active-frame');
  }

  /** Keyboard shortcuts go to the workbench, not to a webview that kept focus. */
  async press(keys: string): Promise<void> {
    await this.page.locator('.monaco-workbench').focus();
    await this.page.keyboard.press(keys);
  }

  /** Opens a file by name through Quick Open and waits for its editor. */
  async openFile(name: string, uriSuffix: string): Promise<void> {
    await this.press('Control+P');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(name);
    await this.page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 20_000 });
    await this.page.keyboard.press('Enter');
    await this.editor(uriSuffix).waitFor({ timeout: 30_000 });
  }

  editor(uriSuffix: string) {
    return this.page.locator(`.monaco-editor[data-uri$="${uriSuffix}"]`).first();
  }

  /** Text of the Problems panel's rows (opens it). */
  async problems(): Promise<string[]> {
    await this.press('Control+Shift+M');
    const rows = this.page.locator('.markers-panel .monaco-list-row');
    await rows.first().waitFor({ timeout: 30_000 });
    return rows.allInnerTexts();
  }

  /** The errors the status bar counts in the Problems panel (its first figure). */
  async errorCount(): Promise<number> {
    const text = await this.page.locator('[id="status.problems"]').innerText();
    const n = /\d+/.exec(text);
    if (!n) throw new Error(`no count in the Problems status item: ${JSON.stringify(text)}`);
    return Number(n[0]);
  }

  /** The editor terminals open in the panel (its tab list shows only from two on). */
  async terminalCount(): Promise<number> {
    await this.runCommand('Terminal: Focus Terminal');
    await this.page.locator('.terminal-wrapper').first().waitFor({ timeout: 30_000 });
    const tabs = await this.page.locator('.terminal-tabs-entry').count();
    return tabs || 1;
  }

  /** Reloads the window and waits for the new workbench (a mark on the old document tells the two apart: the old one lingers, inert). */
  async reload(): Promise<void> {
    await this.page.evaluate('globalThis.larBeforeReload = true');
    await this.runCommand('Developer: Reload Window');
    await eventually(
      'the reloaded window',
      async () =>
        (await this.page.evaluate('globalThis.larBeforeReload !== true').catch(() => false)) ? true : undefined,
      60_000,
    );
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  }

  /**
   * Clicks an item of the context menu that is open. A menu that has only just opened may take the first click
   * for the one that opened it and stay open (seen on VS Code 1.139): the item is clicked until the menu closes.
   */
  async clickMenuItem(label: string): Promise<void> {
    const item = this.page.locator('.monaco-menu .action-label', { hasText: label });
    await item.first().waitFor({ timeout: 15_000 });
    await eventually(
      `the menu item "${label}" taken`,
      async () => {
        if ((await item.count()) === 0) return true;
        await item
          .first()
          .click({ timeout: 2_000 })
          .catch(() => {});
        await this.page.waitForTimeout(300);
        return (await item.count()) === 0 ? true : undefined;
      },
      15_000,
    );
  }

  /** Types a message into the chat and sends it with Enter. */
  async send(chat: FrameLocator, text: string): Promise<void> {
    await chat.locator('#task').fill(text);
    await chat.locator('#task').press('Enter');
  }

  async screenshot(name: string): Promise<void> {
    await this.page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
  }

  async close(): Promise<void> {
    await this.page.close().catch(() => {});
  }
}

/** Polls until `probe` returns a value (not undefined), or fails saying what was awaited. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
  lastSeen?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const seen = lastSeen?.();
  const why = last instanceof Error ? last.message : String(last);
  throw new Error(`timed out waiting for ${what}${last ? `: ${why}` : ''}${seen ? ` (${seen})` : ''}`);
}
