/**
 * One MCP server for one run, through the official SDK's client: started (stdio in the sandbox, or
 * HTTP at its one URL), its tools listed with bounds, calls made one at a time with a time limit and
 * a size limit, its list re-read when it says it changed, and its end noticed. Every failure is a
 * sentence for the user and the model, never a crash of the run.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { confinedFetch } from './http';
import { BoundedStdioTransport, type StdioLaunch } from './stdio';
import type { McpResultLike } from './results';

/** A tool's name as MCP spells them (1 to 128 characters); any other is left out, never shown whole. */
const TOOL_NAME = /^[A-Za-z0-9_.\/-]{1,128}$/;

/** A name from a server as a sentence may quote it: JSON-quoted, short. */
export const shownName = (name: string): string => JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);

/** A tool as its server listed it. */
export interface ListedTool {
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly?: boolean;
  destructive?: boolean;
}

export interface ConnectionLimits {
  startMs: number;
  callMs: number;
  maxMessageBytes: number;
  maxTools: number;
  /** Bytes of one tool's input schema and description; a larger one leaves the tool out. */
  maxSchemaBytes: number;
  /** Bytes of all of a server's schemas and descriptions: the tools past it are left out. */
  maxListBytes: number;
}

export type Endpoint =
  | { transport: 'stdio'; launch: StdioLaunch }
  | { transport: 'http' | 'sse'; url: URL; headers: Record<string, string> };

/** A call's end: the server's result, or why there is none and whether it ran out of time. */
export type CallEnd = { result: McpResultLike } | { error: string; timeout?: true };

const MAX_RELISTS = 50;

/**
 * Results are read as untrusted text and never checked against a server's output schema: no
 * validator is compiled from what a server sends (a schema is code for a validator like ajv).
 */
const NO_VALIDATION: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

export class McpConnection {
  tools: ListedTool[] = [];
  /** Tools the server listed that were left out, with why (the first ten), and how many in all. */
  omitted: string[] = [];
  omittedCount = 0;
  stopped: string | undefined;

  /** Set once the server has said its list changed too often to be read again. */
  get capped(): string | undefined {
    if (this.stale) return this.stale;
    return this.relists >= MAX_RELISTS ? `its list is not read again after ${MAX_RELISTS} changes` : undefined;
  }
  /** Called after the server's list changed and was read again, and when the server stopped. */
  onChange: (why: 'list_changed' | 'stopped') => void = () => {};

  private readonly client: Client;
  private transport: Transport | undefined;
  private current: AbortController | undefined;
  private relisting: Promise<void> | undefined;
  private relistAgain = false;
  /** Lists read again after a change: a server that keeps saying its list changed is not read without end. */
  private relists = 0;
  private stale: string | undefined;
  private closing = false;

  constructor(
    readonly label: string,
    private readonly endpoint: Endpoint,
    private readonly limits: ConnectionLimits,
    /** The run's masking: a server's stderr is masked before it is cut, so no piece of a secret is left. */
    private readonly mask: (text: string) => string = (t) => t,
  ) {
    this.client = new Client(
      { name: 'lean4-agentic', version: '0.1.0' },
      { capabilities: {}, jsonSchemaValidator: NO_VALIDATION },
    );
  }

  /** stderr's last lines (stdio), for the message that says why it failed. */
  get stderr(): string {
    return this.transport instanceof BoundedStdioTransport ? this.transport.stderr.trim() : '';
  }

  /** Connects and lists the tools; throws an Error whose message says why it could not. */
  async open(): Promise<void> {
    const transport = this.makeTransport();
    this.transport = transport;
    const timer = new AbortController();
    const t = setTimeout(() => timer.abort(), this.limits.startMs);
    try {
      await this.client.connect(transport, { timeout: this.limits.startMs, signal: timer.signal });
      this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relist());
      this.tools = await this.listAll(timer.signal);
    } catch (e) {
      await this.close();
      const why = timer.signal.aborted ? `it did not answer within ${this.limits.startMs / 1000} s` : messageOf(e);
      throw new Error(this.withStderr(why));
    } finally {
      clearTimeout(t);
    }
    this.client.onclose = () => this.ended();
  }

  /** Calls one tool; one call at a time per server (the loop makes them in turn). */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallEnd> {
    if (this.stopped) return { error: `the server has stopped (${this.stopped})` };
    const ac = new AbortController();
    this.current = ac;
    const onAbort = () => ac.abort(new Error('the run was stopped'));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: ac.signal,
        timeout: this.limits.callMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: this.limits.callMs * 5,
      });
      return { result: result as McpResultLike };
    } catch (e) {
      if (ac.signal.aborted) return { error: messageOf(ac.signal.reason) };
      if (e instanceof McpError && e.code === (ErrorCode.RequestTimeout as number))
        return { error: `no answer within ${this.limits.callMs / 1000} s`, timeout: true };
      return { error: this.stopped ? `the server stopped (${this.stopped})` : messageOf(e) };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.current = undefined;
    }
  }

  /** Resolves when a re-read of the list under way has ended, or after `ms` (the run goes on with the list it has). */
  async settled(ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.relisting || signal?.aborted) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const gaveUp = new Promise<void>((r) => {
      timer = setTimeout(r, ms);
      onAbort = () => r();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    await Promise.race([this.relisting, gaveUp]);
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => undefined);
    await this.transport?.close().catch(() => undefined);
  }

  private makeTransport(): Transport {
    const e = this.endpoint;
    const oversized = (bytes: number) => {
      const why = `the server's answer passed ${this.limits.maxMessageBytes} bytes (${bytes} so far) and was not read`;
      this.current?.abort(new Error(why));
    };
    const bounds = { maxMessageBytes: this.limits.maxMessageBytes, onOversized: oversized };
    if (e.transport === 'stdio') return new BoundedStdioTransport(e.launch, bounds);
    const fetch = confinedFetch(e.url, { ...bounds, reach: e.transport === 'sse' ? 'origin' : 'exact' });
    const requestInit = { headers: e.headers };
    return e.transport === 'sse'
      ? new SSEClientTransport(e.url, { fetch, requestInit, eventSourceInit: { fetch } })
      : new StreamableHTTPClientTransport(e.url, { fetch, requestInit });
  }

  /**
   * Every page of the list, bounded: in tools, in each tool's schema, in the whole list's size (every
   * request carries it), and in the names kept of what was left out. Paging stops at the bound.
   */
  private async listAll(signal: AbortSignal): Promise<ListedTool[]> {
    const out: ListedTool[] = [];
    const omitted: string[] = [];
    let dropped = 0;
    let bytes = 0;
    const leave = (why: string) => {
      dropped++;
      if (omitted.length < 10) omitted.push(why);
    };
    let cursor: string | undefined;
    for (let page = 0; page < 50 && out.length < this.limits.maxTools; page++) {
      const r = await this.client.listTools(cursor ? { cursor } : {}, { signal, timeout: this.limits.startMs });
      for (const t of r.tools) {
        const name = shownName(t.name);
        if (!TOOL_NAME.test(t.name)) {
          leave(`${name} (not a tool name: 1 to 128 of A-Z a-z 0-9 _ - . /)`);
          continue;
        }
        if (out.length >= this.limits.maxTools) {
          leave(`${name} (past ${this.limits.maxTools} tools)`);
          continue;
        }
        const size =
          Buffer.byteLength(JSON.stringify(t.inputSchema)) + Buffer.byteLength(t.description ?? t.title ?? '');
        if (size > this.limits.maxSchemaBytes)
          leave(`${name} (its schema and description are ${size} bytes, over ${this.limits.maxSchemaBytes})`);
        else if (bytes + size > this.limits.maxListBytes)
          leave(`${name} (the list passed ${this.limits.maxListBytes} bytes of schemas and descriptions)`);
        else {
          bytes += size;
          out.push({
            tool: t.name,
            description: (t.description ?? t.title ?? '').slice(0, 1024),
            inputSchema: t.inputSchema,
            ...(typeof t.annotations?.readOnlyHint === 'boolean' ? { readOnly: t.annotations.readOnlyHint } : {}),
            ...(typeof t.annotations?.destructiveHint === 'boolean'
              ? { destructive: t.annotations.destructiveHint }
              : {}),
          });
        }
      }
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    if (cursor)
      leave(
        `the rest of its pages (past ${out.length >= this.limits.maxTools ? `${this.limits.maxTools} tools` : '50 pages'})`,
      );
    this.omitted = omitted;
    this.omittedCount = dropped;
    return out;
  }

  /** The list again after `tools/list_changed`: one read at a time, a burst of notices read once more at most. */
  private relist(): void {
    if (this.relists >= MAX_RELISTS) return;
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    this.relisting = (async () => {
      do {
        this.relistAgain = false;
        try {
          this.tools = await this.listAll(AbortSignal.timeout(this.limits.startMs));
        } catch (e) {
          // A server that cannot list its tools in time is not asked again: the loop would wait on it.
          this.tools = [];
          this.omitted = [];
          this.omittedCount = 0;
          this.stale = `its list could not be read again (${messageOf(e).slice(0, 200)}): its tools are gone and it is not asked again`;
          this.relists = MAX_RELISTS;
        }
        this.relists++;
        if (!this.stopped) this.onChange('list_changed');
      } while (this.relistAgain && !this.stopped && this.relists < MAX_RELISTS);
    })().finally(() => (this.relisting = undefined));
  }

  private ended(): void {
    if (this.stopped || this.closing) return;
    const exit = this.transport instanceof BoundedStdioTransport ? this.transport.exited : undefined;
    this.stopped = this.withStderr(exit ? `it exited (${exit})` : 'the connection closed');
    this.tools = [];
    this.onChange('stopped');
  }

  private withStderr(why: string): string {
    const masked = this.mask(this.stderr);
    let tail = masked.slice(-600);
    // Cut at a line's start: a secret the cut went through is not left half shown.
    if (tail.length < masked.length && tail.includes('\n')) tail = tail.slice(tail.indexOf('\n') + 1);
    const said = this.mask(why).slice(0, 400);
    return tail ? `${said}; its stderr ended with: ${tail}` : said;
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
