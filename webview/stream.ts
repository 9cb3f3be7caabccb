/**
 * Model text in the log: markdown rendered to nodes (never HTML), the answer streamed at most once a
 * frame, and the collapsed reasoning box above it.
 */
import { MarkdownStream, renderMarkdown, type MiniDocument, type RenderHooks } from './markdown';
import { el, inner, send } from './page';
import { append, pin } from './scroll';
import { state, type Msg } from './state';
import { setActivity } from './status';

const doc: MiniDocument<HTMLElement> = document;

/** Links open through the extension (which checks them); code blocks get a Copy button. */
const hooks: RenderHooks<HTMLElement> = {
  link(a, href) {
    const el = a;
    const open = (e: Event) => {
      // Stopped here, the webview host's own link handler never sees it: one policy, one opening.
      e.preventDefault();
      e.stopPropagation();
      send({ type: 'openLink', href });
    };
    el.addEventListener('click', open);
    el.addEventListener('auxclick', (e) => {
      e.preventDefault();
      e.stopPropagation();
    });
  },
  codeBlock(head, code) {
    const b = el('button', 'secondary small copy', 'Copy');
    b.title = 'Copy the code';
    b.setAttribute('aria-label', 'Copy the code');
    b.addEventListener('click', () => {
      send({ type: 'copy', text: code.slice(0, 200_000) });
      b.textContent = 'Copied';
      setTimeout(() => (b.textContent = 'Copy'), 1500);
    });
    head.appendChild(b);
  },
};
const markdown = (text: string): HTMLElement => renderMarkdown(doc, text, hooks);

/** A message of the user's, as the chat shows it. */
export function userBubble(text: string, cls = 'msg user'): HTMLElement {
  const u = el('div', cls);
  u.appendChild(markdown(text));
  return u;
}

const schedule = (f: () => void) =>
  typeof requestAnimationFrame === 'function' ? requestAnimationFrame(f) : setTimeout(f, 16);

/** Draws what streamed since the last frame (at most once a frame, however many deltas came). */
function drawStream(): void {
  state.frame = false;
  const { streaming, stream, tailNode } = state;
  if (!streaming || !stream) return;
  const u = stream.update(state.streamed);
  for (const d of u.done) streaming.insertBefore(d, tailNode ?? null);
  const tail = u.tail;
  if (tailNode) tailNode.replaceWith(tail);
  else streaming.appendChild(tail);
  state.tailNode = tail;
  pin();
}

function requestDraw(): void {
  if (state.frame) return;
  state.frame = true;
  schedule(drawStream);
}

export function endStream(): void {
  state.streaming = undefined;
  state.streamed = '';
  state.stream = undefined;
  state.tailNode = undefined;
  state.thinking = undefined;
  state.thought = '';
  state.thoughtText = undefined;
  state.thoughtSummary = undefined;
}

/** The reasoning box of the current answer, made (collapsed, above the answer) on first use. */
function reasoningBox(): HTMLElement {
  if (!state.thinking) {
    const thinking = el('details', 'reasoning');
    state.thinking = thinking;
    thinking.appendChild(el('summary', '', 'Thinking'));
    thinking.appendChild(el('div', 'reasoning-text'));
    if (state.streaming) {
      // The answer already streaming moves below its reasoning.
      inner.appendChild(thinking);
      inner.appendChild(state.streaming);
      pin();
    } else append(thinking);
  }
  return state.thinking;
}

/** Sets the reasoning box's text whole (a final answer, a retract) or grows it by a delta (appended, not rebuilt). */
function showReasoning(text: string, delta?: string): void {
  const box = reasoningBox();
  if (delta === undefined || !state.thoughtText || !state.thoughtSummary) {
    state.thoughtSummary = el('summary', '', '');
    state.thoughtText = el('div', 'reasoning-text');
    state.thoughtText.appendChild(document.createTextNode(text));
    box.replaceChildren(state.thoughtSummary, state.thoughtText);
  } else state.thoughtText.appendChild(document.createTextNode(delta));
  state.thoughtSummary.textContent = `Thinking (${text.length.toLocaleString()} characters)`;
}

export function streamText(msg: Msg<'text'>): void {
  setActivity(undefined);
  if (!state.streaming) {
    state.streaming = append(el('div', 'msg assistant streaming'));
    state.stream = new MarkdownStream(doc, hooks);
  }
  state.streamed += msg.delta;
  requestDraw();
}

export function streamReasoning(msg: Msg<'reasoning'>): void {
  setActivity(undefined);
  state.thought += msg.delta;
  showReasoning(state.thought, msg.delta);
}

/** Text streamed as the answer that was reasoning after all moves to the reasoning box. */
export function retract(msg: Msg<'retract'>): void {
  const moved = state.streamed.slice(0, msg.chars);
  state.streamed = state.streamed.slice(msg.chars);
  state.thought += moved;
  showReasoning(state.thought);
  if (state.streaming) {
    // Drawn again from the start: the text that moved may have been in settled blocks.
    state.streaming.replaceChildren();
    state.stream = new MarkdownStream(doc, hooks);
    state.tailNode = undefined;
    requestDraw();
  }
}

export function showAnswer(msg: Msg<'assistant'>): void {
  if (msg.reasoning) showReasoning(msg.reasoning);
  setActivity(undefined);
  if (msg.text) {
    // The whole answer once more: this rendering is the authoritative one.
    const target = state.streaming ?? append(el('div', 'msg assistant'));
    target.className = 'msg assistant';
    target.replaceChildren(markdown(msg.text));
    pin();
  } else state.streaming?.remove();
  endStream();
}
