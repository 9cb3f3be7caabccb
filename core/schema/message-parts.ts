/**
 * The parts of a user's message: the text typed, and the context attached to it with `@` (a file, the
 * selection, the Problems of a file, the terminal's last output). Recorded in the trajectory so a reader
 * and a resumed chat see what the model saw; the verifier reads them as the user's context and never scores them.
 */
import { z } from 'zod';

export const ATTACHMENT_KINDS = ['file', 'selection', 'problems', 'terminal'] as const;
export const AttachmentKind = z.enum(ATTACHMENT_KINDS);
export type AttachmentKind = z.infer<typeof AttachmentKind>;

export const TextPart = z.object({ type: z.literal('text'), text: z.string() });

export const AttachmentPart = z.object({
  type: z.literal('attachment'),
  kind: AttachmentKind,
  /** What the user picked, as the chip shows it: `@main.ts`, `@selection`. */
  label: z.string(),
  /** Where the content came from: `src/a.ts`, `src/a.ts:3-9`, `problems of src/a.ts`, `agent terminal: npm test`. */
  source: z.string(),
  /** The content the model was given (capped, secrets masked). */
  content: z.string(),
  /** The content was cut to the cap (the model was told). */
  truncated: z.boolean().optional(),
});
export type AttachmentPart = z.infer<typeof AttachmentPart>;

export const MessagePart = z.discriminatedUnion('type', [TextPart, AttachmentPart]);
export type MessagePart = z.infer<typeof MessagePart>;

/** The attachments among a message's parts (none for a message from before parts existed). */
export function attachmentsOf(parts: readonly MessagePart[] | undefined): AttachmentPart[] {
  return (parts ?? []).filter((p): p is AttachmentPart => p.type === 'attachment');
}
