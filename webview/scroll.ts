/**
 * Scroll pinning: stick to the bottom only while the reader is there. Scrolling up (wheel, keys, the
 * scrollbar) lets them read while the run goes on; coming back to the bottom, or "Jump to latest",
 * follows again. Only the log scrolls (never scrollIntoView, which also moves the view's own frame).
 */
import { inner, jump, log } from './page';
import { state } from './state';

const NEAR_BOTTOM = 32;
const atBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight <= NEAR_BOTTOM;

export function pin(): void {
  if (state.stick) log.scrollTop = log.scrollHeight;
  jump.hidden = state.stick;
}

export function watchScroll(): void {
  log.addEventListener('scroll', () => {
    state.stick = atBottom();
    jump.hidden = state.stick;
  });
  log.addEventListener('wheel', (e) => {
    // Upward, on the log itself (a code block or a command's output scrolls on its own), and only when the log can scroll.
    const target = e.target as Element | null;
    const nested = typeof target?.closest === 'function' ? target.closest('pre, .md table') : null;
    if (e.deltaY < 0 && !nested && log.scrollHeight > log.clientHeight) state.stick = false;
  });
  jump.addEventListener('click', () => {
    state.stick = true;
    pin();
  });
  if (typeof ResizeObserver === 'function') new ResizeObserver(pin).observe(inner);
}

/** Adds a finished node (children included) and follows it if the reader is at the bottom. */
export function append(node: HTMLElement): HTMLElement {
  inner.appendChild(node);
  pin();
  return node;
}

/** Scrolls the log (only the log) to show a node near its top; following resumes only if that is the bottom. */
export function scrollToNode(node: HTMLElement): void {
  log.scrollTop += node.getBoundingClientRect().top - log.getBoundingClientRect().top - 16;
  state.stick = atBottom();
  jump.hidden = state.stick;
}
