/**
 * A user's message with its attachments, as the model reads it: the text, then each attachment in a
 * fenced block under a line naming it. Pure, so the loop, a resumed chat and the tests render it alike.
 */
import { attachmentsOf, type AttachmentPart, type MessagePart } from './message-parts';

/** What the user sent: the text typed and what was attached to it. */
export interface UserInput {
  text: string;
  attachments?: readonly AttachmentPart[];
}

const KIND_NAME: Record<AttachmentPart['kind'], string> = {
  file: 'file',
  selection: 'selection',
  problems: 'problems',
  terminal: 'terminal output',
};

/** A fence longer than any run of backticks in the content, so the content cannot close it. */
export function fenceFor(content: string): string {
  let longest = 0;
  for (const m of content.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** One attachment as the model reads it: a line naming it, then its content in a fence it cannot close. */
export function renderAttachment(a: AttachmentPart): string {
  const cut = a.truncated ? ` (cut to fit: only its ${a.kind === 'terminal' ? 'end' : 'start'} is shown)` : '';
  const fence = fenceFor(a.content);
  return `Attached by the user, ${KIND_NAME[a.kind]} ${a.source}${cut}:\n${fence}\n${a.content}\n${fence}`;
}

/** The user's message as the model receives it. */
export function renderUserMessage(text: string, attachments: readonly AttachmentPart[] = []): string {
  if (!attachments.length) return text;
  return [text, ...attachments.map(renderAttachment)].join('\n\n');
}

/** Whether `rendered` (as the model received it) is the user's message `text`, with or without its attachments. */
export function isMessage(rendered: string, text: string): boolean {
  return rendered === text || rendered.startsWith(`${text}\n\nAttached by the user, `);
}

/** The parts recorded for a message; none without attachments (the file stays as it was before parts). */
export function partsOf(input: UserInput): MessagePart[] | undefined {
  if (!input.attachments?.length) return undefined;
  return [{ type: 'text', text: input.text }, ...input.attachments];
}

/** A recorded user message (or a header's task) as the model read it. */
export function recordedUserText(content: string, parts: readonly MessagePart[] | undefined): string {
  return renderUserMessage(content, attachmentsOf(parts));
}

/** A queued message is text or text with attachments. */
export function asUserInput(typed: string | UserInput): UserInput {
  return typeof typed === 'string' ? { text: typed } : typed;
}
