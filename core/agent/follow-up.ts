/**
 * A chat's next message asks again what the model never answered (the server was down, the run was cut
 * short), so a conversation never holds two user turns in a row: pure logic about a Conversation.
 */
import type { Conversation } from './conversation';
import { stripNewRunNote } from './prompts';
import { isMessage } from '../schema/user-message';

/** What the next run of a chat asks, and from which conversation. */
export interface FollowUp {
  /** What the model is asked: the message, after the ones it never answered. */
  task: string;
  /** The conversation the run continues; none when the model never answered the chat at all. */
  conversation: Conversation | undefined;
  /** A resumed run asks again what the chat already shows. */
  reasked: boolean;
  /** The message is among the unanswered already (a Retry): it is asked once, its attachments with it. */
  repeated: boolean;
  /** Drops the unanswered messages from the conversation (they are in `task`): called when the run starts. */
  takeUnanswered: () => void;
}

/** The task of a follow-up to `conversation`; a resume asks only what is unanswered (its own message is not the user's). */
export function prepareFollowUp(
  conversation: Conversation | undefined,
  task: string,
  opts: { resume?: boolean } = {},
): FollowUp {
  const none: FollowUp = { task, conversation, reasked: false, repeated: false, takeUnanswered: () => {} };
  if (!conversation) return none;
  const unanswered = conversation.unanswered().map(stripNewRunNote);
  // A message sent again (Retry after the model failed to answer it) is asked once, not twice.
  const again = (first: string[]) => !opts.resume && isMessage(first[first.length - 1] ?? '', task);
  const asked = (first: string[]) => (opts.resume || again(first) ? first : [...first, task]).join('\n\n');
  if (conversation.turns.length - unanswered.length <= 2) {
    // The model never answered this chat at all: it starts afresh with what was asked.
    return {
      ...none,
      task: asked([stripNewRunNote((conversation.turns[1] as { text: string }).text), ...unanswered]),
      conversation: undefined,
      reasked: opts.resume === true,
      repeated: again([stripNewRunNote((conversation.turns[1] as { text: string }).text), ...unanswered]),
    };
  }
  if (!unanswered.length) return none;
  return {
    ...none,
    task: asked(unanswered),
    reasked: opts.resume === true,
    repeated: again(unanswered),
    takeUnanswered: () => void conversation.takeUnanswered(),
  };
}

/**
 * The user took a message that was never answered back (Edit): it leaves the conversation, so the next message
 * does not ask it again (it may hold what the user meant to remove). Returns the conversation to keep: none when
 * the model never answered the chat at all and this was its first message.
 */
export function discardUnanswered(conversation: Conversation | undefined, text: string): Conversation | undefined {
  if (!conversation) return undefined;
  const unanswered = conversation.unanswered().map(stripNewRunNote);
  const at = unanswered.findLastIndex((u) => isMessage(u, text));
  if (at >= 0) {
    conversation.dropUnanswered(at);
    return conversation;
  }
  // The chat's first message, never answered: the chat starts afresh (a later failed message keeps its Retry).
  const first = conversation.turns[1] as { kind: string; text?: string } | undefined;
  const neverAnswered = conversation.turns.length - unanswered.length <= 2;
  if (neverAnswered && first?.text !== undefined && isMessage(stripNewRunNote(first.text), text)) return undefined;
  return conversation;
}
