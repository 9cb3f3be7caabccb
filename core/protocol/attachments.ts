/**
 * What the chat says about attachments (`@`): the webview names what to attach (a reference, never the
 * content) and shows chips; the extension offers the choices and reads the content itself at send time.
 */
import { z } from 'zod';
import { AttachmentKind, type AttachmentPart } from '../schema/message-parts';

/** A workspace-relative path as the extension offered it; the extension confines it again on use. */
const OfferedPath = z
  .string()
  .min(1)
  .max(1000)
  .refine((p) => !p.includes('\0'), 'no NUL characters');

/** Most attachments one message may carry. */
export const MAX_ATTACHMENTS = 8;

/** What the user picked: a kind, and for a file (or the Problems of one) its path. */
export const AttachmentRef = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('file'), path: OfferedPath }).strict(),
  z.object({ kind: z.literal('selection') }).strict(),
  z.object({ kind: z.literal('problems'), path: OfferedPath.optional() }).strict(),
  /** The agent's terminal (the default), or the active terminal of the user's, read through shell integration. */
  z.object({ kind: z.literal('terminal'), of: z.enum(['agent', 'active']).optional() }).strict(),
]);
export type AttachmentRef = z.infer<typeof AttachmentRef>;

/** A chip: what the user sees of an attachment in the input and in their message. */
export const AttachmentChip = z
  .object({ kind: AttachmentKind, label: z.string().max(300), source: z.string().max(1000).optional() })
  .strict();
export type AttachmentChip = z.infer<typeof AttachmentChip>;

export const AttachmentChips = z.array(AttachmentChip).max(MAX_ATTACHMENTS);

/** The picker's choices for what is typed after `@`: the files that match, and whether the others are there. */
export const AttachOptions = z
  .object({
    type: z.literal('attachOptions'),
    query: z.string().max(200),
    files: z.array(OfferedPath).max(50),
    /** The active editor's selection (`src/a.ts:3-9`), when there is one. */
    selection: z.string().max(1000).optional(),
    /** The file whose Problems "Problems" attaches (the active editor's). */
    problemsOf: z.string().max(1000).optional(),
    /** Which terminal "Terminal output" reads, and its last command; absent when there is none. */
    terminal: z.string().max(1000).optional(),
    /** The active terminal's name and last command, when shell integration let the extension read it. */
    activeTerminal: z.string().max(1000).optional(),
  })
  .strict();
export type AttachOptions = z.infer<typeof AttachOptions>;

/** The chips of resolved attachments (their content stays in the extension). */
export function chipsOf(attachments: readonly AttachmentPart[]): AttachmentChip[] {
  return attachments
    .slice(0, MAX_ATTACHMENTS)
    .map((a) => ({ kind: a.kind, label: a.label.slice(0, 300), source: a.source.slice(0, 1000) }));
}

/** A message's `attachments` field: absent when nothing was attached. */
export function chipsField(attachments: readonly AttachmentPart[]): { attachments?: AttachmentChip[] } {
  return attachments.length ? { attachments: chipsOf(attachments) } : {};
}
