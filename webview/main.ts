/**
 * The chat view's script (bundled for the browser to dist/chat.js). Every
 * message from the extension is validated against the shared schema (the zod
 * schema as JSON Schema, ./protocol-check.ts); model text becomes DOM nodes
 * through textContent only (see ./markdown.ts).
 */
import type { ToWebview } from '../core/protocol/chat';
import { toWebview } from 'lar:chat-protocol';
import { compileSchema } from './protocol-check';
import { attachOptions, pickerKey, restoreInput, setUpAttachments, takeAttachments, withChips } from './attachments';
import { approvalDone, askApproval, showApproval, showStep, showToolOutput, startTool } from './cards';
import { forgetCards, runChanges } from './changes';
import { drawTimeline, setHistoryVisible, timeline } from './history';
import { checkpointRestored, interrupted, laterChanges, outcome, runEnded, showError } from './notices';
import {
  contextBar,
  el,
  history,
  inner,
  newChat,
  openTrajectory,
  run,
  send,
  showHistory,
  status,
  stop,
  task,
} from './page';
import { setPickerRunning, showModelChoice, showModels } from './model-picker';
import { append, watchScroll } from './scroll';
import { showMcp, showMcpNotice } from './mcp';
import { sandboxNote } from './sandbox-note';
import {
  bubbleFor,
  forgetSend,
  clearSends,
  inputChanged,
  recallKey,
  remember,
  sendFailed,
  sendMessage,
  sendReceived,
} from './sends';
import { state, type Msg } from './state';
import { drawCounters, setActivity, setRunning, showConnection, showContext } from './status';
import { listThreads } from './threads';
import { endStream, retract, showAnswer, streamReasoning, streamText, userBubble } from './stream';
import { watchWelcome } from './welcome';

function clear(): void {
  inner.replaceChildren();
  forgetCards();
  state.approvals.clear();
  state.liveCards.clear();
  state.mcpPanels.clear();
  endStream();
  setActivity(undefined);
  state.run = undefined;
  drawCounters();
  status.textContent = '';
  contextBar.hidden = true;
  openTrajectory.hidden = true;
  timeline.clear();
  drawTimeline();
  clearSends();
}

function runStarted(msg: Msg<'runStarted'>): void {
  endStream();
  setHistoryVisible(false);
  timeline.clear();
  drawTimeline();
  // The user sent something: follow the run from here.
  state.stick = true;
  // Resumed or not, the notice's button is spent once another run begins.
  if (state.resumeButton) state.resumeButton.disabled = true;
  state.resumeButton = undefined;
  state.run = { started: Date.now(), steps: 0, tokens: 0 };
  drawCounters();
  // The message's bubble is in the log since it was sent; a reload's replay draws it.
  if (!msg.shown) withChips(bubbleFor(msg.id, msg.task, 'msg user'), msg.attachments);
  // How the commands of this run are confined, under the task: a warning when they are not.
  append(sandboxNote(msg.sandbox));
  if (msg.rules?.length) append(el('div', 'rules-note', `Rules in force: ${msg.rules.join(', ')}`));
  status.textContent = `${msg.model} · ${msg.endpoint}`;
  status.title = msg.trajectory;
  openTrajectory.hidden = false;
}

/** One handler for each message the extension sends (the compiler checks none is missing). */
const handlers: { [K in ToWebview['type']]: (m: Msg<K>) => void } = {
  focusInput: () => task.focus(),
  queued: (msg) => {
    withChips(bubbleFor(msg.id, msg.text, 'msg user queued'), msg.attachments).title =
      'Reaches the agent at its next turn';
    state.stick = true;
  },
  sendReceived,
  sendFailed,
  checkpointRestored,
  restored: (msg) => append(el('div', 'restored-note', msg.text)),
  laterChanges,
  runChanges,
  userMessage: (msg) => {
    append(withChips(userBubble(msg.text), msg.attachments));
    remember(msg.text);
  },
  attachOptions,
  unsent: (msg) => {
    // An attachment could not be read: the message leaves the log and goes back to the input with it.
    if (msg.id !== undefined) forgetSend(msg.id);
    restoreInput(msg.text, msg.attachments);
    showError({ type: 'error', message: msg.reason, actions: [] });
  },
  interrupted,
  clear,
  state: (msg) => {
    setRunning(msg.running);
    setPickerRunning(msg.running);
  },
  runStarted,
  text: streamText,
  reasoning: streamReasoning,
  retract,
  assistant: showAnswer,
  context: showContext,
  waiting: () => {
    if (state.running) setActivity({ text: 'Waiting for the model', since: Date.now() });
  },
  toolStarted: startTool,
  toolOutput: showToolOutput,
  compaction: (msg) => {
    endStream();
    append(el('div', 'compaction', msg.text));
  },
  step: (msg) => {
    showStep(msg);
    if (timeline.apply(msg.card)) drawTimeline();
  },
  mcp: showMcp,
  mcpNotice: showMcpNotice,
  connection: showConnection,
  models: showModels,
  modelChoice: showModelChoice,
  history: listThreads,
  approval: askApproval,
  approvalDone,
  showApproval,
  outcome,
  end: runEnded,
  error: showError,
};

function receive<K extends ToWebview['type']>(type: K, msg: Msg<K>): void {
  handlers[type](msg);
}

function submit(): void {
  const text = task.value.trim();
  if (!text) return;
  sendMessage(text, takeAttachments());
  task.value = '';
}

watchScroll();
watchWelcome();
setUpAttachments(run.parentElement ?? run);
run.addEventListener('click', submit);
task.addEventListener('input', inputChanged);
task.addEventListener('keydown', (e) => {
  // The @ picker, while open, has the arrows and Enter; then ↑ recall.
  if (pickerKey(e)) return;
  if (recallKey(e)) {
    e.preventDefault();
    e.stopPropagation();
    return;
  }
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});
// Escape stops a run from anywhere in the view, as the Stop button does.
window.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && state.running) send({ type: 'stop' });
});
showHistory.addEventListener('click', () => setHistoryVisible(history.hidden !== false));
stop.addEventListener('click', () => send({ type: 'stop' }));
openTrajectory.addEventListener('click', () => send({ type: 'openTrajectory' }));
newChat.addEventListener('click', () => send({ type: 'newChat' }));
const validIn = compileSchema(toWebview);
window.addEventListener('message', (e) => {
  if (!validIn(e.data)) return;
  const msg = e.data as ToWebview;
  receive(msg.type, msg);
});
drawTimeline();
send({ type: 'ready' });
