/**
 * Each message the user sends gets exactly one answer the chat can show on its bubble: the run's start,
 * queued, or failed with the reason (so nothing typed is lost). No `vscode`: unit-tested.
 */
import { clip, type ErrorAction, type ToWebview } from '../../core/protocol/chat';

/** The buttons of a failure that says the server is not reachable (or refuses us): the connection is looked at again. */
const CONNECTION_ACTIONS: ReadonlySet<ErrorAction> = new Set(['testConnection', 'setApiKey', 'openEndpointSetting']);

/** Whether a failure with these buttons is the connection's: the chat's connection line is checked again. */
function isConnectionFailure(actions: readonly ErrorAction[]): boolean {
  return actions.some((a) => CONNECTION_ACTIONS.has(a));
}

/** Says a failure: on the message's bubble, or in the log. */
export type Fail = (message: string, actions?: ErrorAction[]) => void;

/** A failure goes on the message's bubble while its run has not started, else to the log; the connection's is re-checked. */
export function failureOf(
  chat: { fail(message: string, actions?: ErrorAction[]): void; checkConnection(): void },
  answer: SendAnswer,
): Fail {
  return (message, actions = []) => {
    if (!answer.fail(message, actions)) chat.fail(message, actions);
    if (isConnectionFailure(actions)) chat.checkConnection();
  };
}

export class SendAnswer {
  private answered = false;

  /** `id`: the webview's id of the message; none for a run the chat starts itself (a queued message, Resume). */
  constructor(
    readonly id: string | undefined,
    private readonly task: string,
    private readonly post: (msg: ToWebview) => void,
  ) {}

  /** The id the run's start carries, once: the bubble is then sent and later failures are the run's own. */
  started(): { id?: string } {
    const first = !this.answered;
    this.answered = true;
    return first && this.id !== undefined ? { id: this.id } : {};
  }

  /** Queued for the run in progress. */
  queued(): { id?: string } {
    return this.started();
  }

  /**
   * A failure before the run started becomes the message's (its bubble is marked failed, with the reason and
   * the buttons); false when it is not a message's to carry (no id, or the run started): say it as an error.
   */
  fail(reason: string, actions: ErrorAction[] = []): boolean {
    return !this.answered && this.unanswered(reason, actions);
  }

  /**
   * The run started but the model never answered the message (its first request failed): the bubble is
   * marked failed all the same, so Retry sends it again. False for a run the chat started itself.
   */
  unanswered(reason: string, actions: ErrorAction[]): boolean {
    if (this.id === undefined) return false;
    this.answered = true;
    this.post({ type: 'sendFailed', id: this.id, task: clip(this.task, 20_000), reason: clip(reason, 4000), actions });
    return true;
  }

  /** The attempt is over: a message still unanswered (stopped before the run started) failed all the same. */
  settle(reason = 'The run was stopped before it started: the message was not sent.'): void {
    this.fail(reason);
  }
}

/** The queue a stopped run drops: none of it reached the agent, so each bubble is told it was not sent. */
export function droppedQueue(queued: readonly { text: string; id?: string }[]): ToWebview[] {
  return queued.flatMap((q) =>
    q.id === undefined
      ? []
      : [
          {
            type: 'sendFailed' as const,
            id: q.id,
            task: clip(q.text, 20_000),
            reason: 'the run was stopped before the agent read this message',
            actions: [],
          },
        ],
  );
}
