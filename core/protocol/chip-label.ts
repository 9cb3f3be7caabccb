/** A reference's chip label, apart from the zod schemas of ./attachments.ts so the chat's bundle carries no validator. */
import type { AttachmentRef } from './attachments';

/** The chip a reference becomes once resolved: the label `@name` the text keeps. */
export function chipLabel(ref: AttachmentRef): string {
  if (ref.kind === 'file') return `@${ref.path.split('/').pop() ?? ref.path}`;
  return `@${ref.kind}`;
}
