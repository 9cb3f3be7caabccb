/**
 * `lar run --task -`: the task read from standard input, so a harness can pass any text (quotes, newlines,
 * `$(…)`, non-ASCII) without quoting it for a shell: `printf '%s' "$LAR_TASK" | lar run --task - …`.
 */
import { UsageError } from './read-input';

/** A task is a prompt, not a document: past this, stdin is not what the caller meant to send. */
export const MAX_TASK_BYTES = 1024 * 1024;

/**
 * The whole of `input` as UTF-8 text, or a UsageError naming `--task -` when it is empty (or only white space),
 * not valid UTF-8, or longer than `maxBytes` (reading stops there: a writer that never ends is not waited out).
 */
export async function readTaskFrom(
  input: NodeJS.ReadableStream & { destroy?: () => void },
  maxBytes = MAX_TASK_BYTES,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    size += bytes.length;
    if (size > maxBytes) {
      input.destroy?.();
      throw new UsageError(`--task -: the task on standard input is longer than ${maxBytes} bytes; nothing was run`);
    }
    chunks.push(bytes);
  }
  const bytes = Buffer.concat(chunks, size);
  let text: string;
  try {
    // fatal: a stray byte, an overlong form or an encoded surrogate is refused, not turned into U+FFFD.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new UsageError('--task -: the task on standard input is not valid UTF-8; nothing was run');
  }
  if (!text.trim())
    throw new UsageError(
      `--task -: the task on standard input is empty${size ? ' (only white space)' : ''}; nothing was run`,
    );
  return text;
}
