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
  /** Bytes of one tool's input schema; a larger one leaves the tool out. */
  maxSchemaBytes: number;
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
  /** Tools the server listed that were left out, with why. */
  omitted: string[] = [];
  stopped: string | undefined;

  /** Set once the server has said its list changed too often to be read again. */
  get capped(): string | undefined {
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
  private closing = false;

  constructor(
    readonly label: string,
    private readonly endpoint: Endpoint,
    private readonly limits: ConnectionLimits,
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

  /** Resolves when a re-read of the list under way has ended (at most the start timeout). */
  async settled(): Promise<void> {
    await this.relisting;
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

  /** Every page of the list, bounded in tools and in each tool's schema. */
  private async listAll(signal: AbortSignal): Promise<ListedTool[]> {
    const out: ListedTool[] = [];
    const omitted: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const r = await this.client.listTools(cursor ? { cursor } : {}, { signal, timeout: this.limits.startMs });
      for (const t of r.tools) {
        const schemaBytes = JSON.stringify(t.inputSchema).length;
        if (out.length >= this.limits.maxTools) omitted.push(`${t.name} (past ${this.limits.maxTools} tools)`);
        else if (schemaBytes > this.limits.maxSchemaBytes)
          omitted.push(`${t.name} (its input schema is ${schemaBytes} bytes, over ${this.limits.maxSchemaBytes})`);
        else
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
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    this.omitted = omitted;
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
          this.tools = [];
          this.omitted = [`the list could not be read again: ${messageOf(e)}`];
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
    const tail = this.stderr;
    return tail ? `${why}; its stderr ended with: ${tail.slice(-600)}` : why;
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
