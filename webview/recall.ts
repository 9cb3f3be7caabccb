/**
 * ↑ recall in the chat's input, as in a shell: the messages of this chat, walked with ↑/↓. Pure state (no DOM),
 * so node tests import it; webview/sends.ts wires it to the textarea.
 */

/** The most messages kept for recall. */
const MAX_ENTRIES = 200;

/** Where the caret is in the input, as far as recall cares. */
export interface Caret {
  onFirstLine: boolean;
  onLastLine: boolean;
}

export class Recall {
  private entries: string[] = [];
  private readonly ids = new Set<string>();
  /** While recalling: the entry shown, and the text the input had before the first ↑. */
  private at: number | undefined;
  private draft = '';
  private shown: string | undefined;

  /** A message of this chat (sent now, or read back); one with an id already kept is not kept twice. */
  add(text: string, id?: string): void {
    if (id !== undefined) {
      if (this.ids.has(id)) return;
      this.ids.add(id);
    }
    if (!text.trim() || this.entries[this.entries.length - 1] === text) return;
    this.entries.push(text);
    if (this.entries.length > MAX_ENTRIES) this.entries.splice(0, this.entries.length - MAX_ENTRIES);
    this.leave();
  }

  /** A new chat: nothing to recall. */
  clear(): void {
    this.entries = [];
    this.ids.clear();
    this.leave();
  }

  get recalling(): boolean {
    return this.at !== undefined;
  }

  /**
   * ↑: the message before, or undefined when ↑ should move the caret as usual. It recalls from an empty input,
   * or while the input still holds the recalled text with the caret on its first line.
   */
  up(input: string, caret: Caret): string | undefined {
    if (!this.entries.length) return undefined;
    if (this.at === undefined) {
      if (input.trim()) return undefined;
      this.draft = input;
      return this.show(this.entries.length - 1);
    }
    if (input !== this.shown || !caret.onFirstLine) return undefined;
    return this.show(Math.max(0, this.at - 1));
  }

  /** ↓: the message after, the draft past the newest, or undefined when ↓ should move the caret as usual. */
  down(input: string, caret: Caret): string | undefined {
    if (this.at === undefined || input !== this.shown || !caret.onLastLine) return undefined;
    if (this.at + 1 < this.entries.length) return this.show(this.at + 1);
    const draft = this.draft;
    this.leave();
    return draft;
  }

  /** Escape: recall ends and the input gets back what it had before ↑ (undefined when not recalling). */
  cancel(): string | undefined {
    if (this.at === undefined) return undefined;
    const draft = this.draft;
    this.leave();
    return draft;
  }

  /** The input changed: typing into a recalled message makes it the user's own, and recall ends. */
  edited(input: string): void {
    if (this.at !== undefined && input !== this.shown) this.leave();
  }

  private show(i: number): string {
    this.at = i;
    this.shown = this.entries[i]!;
    return this.shown;
  }

  private leave(): void {
    this.at = undefined;
    this.shown = undefined;
    this.draft = '';
  }
}
