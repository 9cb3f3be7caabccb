/**
 * The running command's live card: the tail of what it prints, masked, sent at most every 150 ms so a
 * chatty command does not flood the chat; it stops when the command's step arrives.
 */
import { clip, OUTPUT_TAIL, type ToWebview } from '../../core/protocol/chat';
import { OutputTail } from '../chat/cards';

/** What prints a command's output (the editor's terminal). */
export interface OutputSource {
  onOutput(listener: (text: string) => void): { dispose(): void };
}

export class LiveOutput {
  private current: { dispose(): void } | undefined;

  constructor(
    private readonly post: (msg: ToWebview) => void,
    private readonly mask: (text: string) => string,
  ) {}

  /** The output of the command `id` from now on (the one watched before stops). */
  watch(id: string, source: OutputSource): void {
    this.end();
    const tail = new OutputTail();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      this.post({
        type: 'toolOutput',
        id: clip(id, 200),
        tail: clip(this.mask(tail.text), OUTPUT_TAIL),
        bytes: tail.bytes,
      });
    };
    const sub = source.onOutput((text) => {
      tail.push(text);
      timer ??= setTimeout(flush, 150);
    });
    this.current = {
      dispose: () => {
        sub.dispose();
        if (timer) clearTimeout(timer);
      },
    };
  }

  /** Stops watching: what was not sent yet is dropped (the step's card shows the output). */
  end(): void {
    this.current?.dispose();
    this.current = undefined;
  }
}
