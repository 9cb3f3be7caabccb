/**
 * The page the extension serves (extension/chat/view.ts) as the script sees it: its elements, the one
 * channel back to the extension, and the node builder every part of the view uses.
 */
import type { FromWebview } from '../core/protocol/chat';
import { fromWebview } from 'lar:chat-protocol';
import { compileSchema } from './protocol-check';

/** The webview's handle on the extension (VS Code injects it; one call per page). */
declare function acquireVsCodeApi(): { postMessage(msg: unknown): void };

const vscode = acquireVsCodeApi();
/** The page's element `id`, as the kind of element the page (extension/chat/view.ts) declares it. */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
}
export const log = $('log');
export const task = $<HTMLTextAreaElement>('task');
export const run = $('run');
export const stop = $('stop');
export const status = $('status');
export const openTrajectory = $('open-trajectory');
export const newChat = $('new-chat');
export const showHistory = $('show-history');
export const history = $('history');
export const timelineBar = $('timeline');
export const connection = $('connection');
export const contextBar = $('context');
export const activity = $('activity');
export const activityText = $('activity-text');
export const counters = $('counters');
export const jump = $('jump');
export const inner = $('log-inner');

/** What the webview may send (the extension checks it again, with zod, on receipt). */
const validOut = compileSchema(fromWebview);

export function send(msg: FromWebview): void {
  if (validOut(msg)) vscode.postMessage(msg);
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function rewardClass(n: number | undefined): string {
  return n === undefined ? 'badge' : n > 0 ? 'badge pos' : n < 0 ? 'badge neg' : 'badge zero';
}
