/**
 * The contents of each file the agent wrote, before and after, so a step's
 * change can be shown in a diff editor on request. In memory only and
 * bounded: past the byte budget the oldest changes go (their Diff button then
 * says so). Pure, no `vscode`.
 */

export interface FileChange {
  id: string;
  /** Workspace-relative path, `/`-separated. */
  path: string;
  before: string;
  after: string;
  /** Whether the file did not exist before. */
  created: boolean;
}

export class FileChanges {
  private readonly changes = new Map<string, FileChange>();
  private bytes = 0;
  private seq = 0;

  constructor(private readonly budgetBytes = 32 * 1024 * 1024) {}

  add(path: string, before: string | undefined, after: string): FileChange {
    const change: FileChange = {
      id: `c${++this.seq}`,
      path,
      before: before ?? '',
      after,
      created: before === undefined,
    };
    this.changes.set(change.id, change);
    this.bytes += size(change);
    for (const [id, old] of this.changes) {
      if (this.bytes <= this.budgetBytes || id === change.id) break;
      this.changes.delete(id);
      this.bytes -= size(old);
    }
    return change;
  }

  get(id: string): FileChange | undefined {
    return this.changes.get(id);
  }

  clear(): void {
    this.changes.clear();
    this.bytes = 0;
  }
}

function size(c: FileChange): number {
  return (c.before.length + c.after.length) * 2;
}
