/**
 * A run's MCP servers (McpTools): started together, each confined like the agent's commands (stdio
 * in the run's sandbox) or reached only at its URL (HTTP); their tools named `mcp__SERVER__TOOL`,
 * recorded as `mcp_tools` lines, offered to the model only where a stage permits them, and called
 * with bounded, named, untrusted results. A server that fails, hangs, floods or changes its list
 * costs a sentence, never the run.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { canonicalDigest } from '../json/canonical';
import { mcpToolName, serverSlug, MAX_SERVER_TOOLS, type McpServerRecord, type McpToolsEvent } from '../schema/mcp';
import { changedBetween, snapshot } from '../tools/executor';
import type { McpServerConfig, McpStdioConfig } from './config';
import { McpConnection, shownName, type ConnectionLimits, type Endpoint, type ListedTool } from './connection';
import { resultText, untrusted } from './results';
import type { StdioLaunch } from './stdio';
import type { McpCallOutcome, McpNote, McpServerState, McpTools } from './types';

/** How a stdio server's process starts: in the run's sandbox (with the network the workflow grants it), or why it may not. */
export type McpLauncher = (
  server: McpStdioConfig,
  network: boolean,
) => { launch: StdioLaunch; confined: boolean } | { refused: string };

export interface McpHubOptions {
  /** Resolved configurations (core/mcp/config.ts resolveServer). */
  servers: readonly McpServerConfig[];
  workspace: string;
  launcher: McpLauncher;
  /** The workflow's `mcp.network`: servers whose sandbox gets the host's network. */
  networkGrants?: readonly string[];
  /** Whether the workflow could permit a server's tools (core/mcp/usable.ts); one it never could is not started. */
  usable?: (server: string) => boolean;
  /** The run's masking, applied to what a server wrote before it is cut (a cut secret would no longer match). */
  mask?: (text: string) => string;
  limits?: Partial<ConnectionLimits>;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  startMs: 30_000,
  callMs: 120_000,
  maxMessageBytes: 32 * 1024 * 1024,
  maxTools: MAX_SERVER_TOOLS,
  maxSchemaBytes: 64 * 1024,
  maxListBytes: 256 * 1024,
};

interface Entry {
  slug: string;
  config: McpServerConfig;
  record: McpServerRecord;
  connection?: McpConnection;
  /** Stable name → the listed tool and its schema digest, as last recorded. */
  tools: Map<string, ListedTool & { digest: string }>;
  error?: string;
  /** Said that the server's list is no longer read again. */
  capped?: boolean;
}

export class McpHub implements McpTools {
  private readonly entries: Entry[] = [];
  private changes: McpToolsEvent[] = [];
  private notes: McpNote[] = [];
  /** Each tool's schema digest as last recorded (takeChanges): a call runs only against the tool the verifier knew. */
  private recorded = new Map<string, string>();
  private version = 0;
  private cached: { key: string; tools: ChatCompletionTool[] } | undefined;

  private constructor(private readonly opts: McpHubOptions) {}

  /** Starts every server at once; a server that cannot start is recorded with why, the others go on. */
  static async start(opts: McpHubOptions): Promise<McpHub> {
    const hub = new McpHub(opts);
    const limits = { ...DEFAULT_LIMITS, ...opts.limits };
    const bySlug = new Map<string, string>();
    const opening: Promise<void>[] = [];
    for (const config of opts.servers) {
      const slug = serverSlug(config.name);
      if (opts.usable && !opts.usable(config.name)) {
        hub.say(
          `MCP server "${config.name}" was not started: no stage of the workflow permits its tools (mcp__${slug}__…).`,
        );
        continue;
      }
      const taken = bySlug.get(slug);
      if (!slug || taken !== undefined) {
        hub.say(
          `MCP server "${config.name}" was not started: ${slug ? `its name makes the same tool names as "${taken}"` : 'its name has no letter or digit'}.`,
        );
        continue;
      }
      bySlug.set(slug, config.name);
      const entry = hub.entryFor(config, slug);
      hub.entries.push(entry);
      opening.push(hub.open(entry, limits));
    }
    await Promise.all(opening);
    // Recorded in the configuration's order, whichever answered first: the file reads the same every run.
    for (const entry of hub.entries) {
      if (entry.error !== undefined) hub.failed(entry, entry.error);
      else hub.relisted(entry, 'start');
      const c = entry.connection;
      if (!c) continue;
      c.onChange = (why) => hub.relisted(entry, why);
      // One that stopped between its start and now told no one: it is recorded stopped after its start.
      if (c.stopped) hub.relisted(entry, 'stopped');
    }
    hub.recorded = hub.current();
    return hub;
  }

  get servers(): McpServerRecord[] {
    return this.entries.map((e) => e.record);
  }

  state(): McpServerState[] {
    return this.entries.map((e) => ({
      server: e.slug,
      label: e.config.name,
      transport: e.record.transport,
      state: e.error ? 'failed' : e.connection?.stopped ? 'stopped' : 'ready',
      tools: [...e.tools.keys()],
      ...(e.error || e.connection?.stopped ? { error: e.error ?? e.connection!.stopped! } : {}),
    }));
  }

  async settle(signal?: AbortSignal): Promise<void> {
    // A notice that came with a call's answer is handled on the next tick; its list is read by then or soon after.
    await new Promise((r) => setImmediate(r));
    await Promise.all(this.entries.map((e) => e.connection?.settled(2000, signal) ?? Promise.resolve()));
  }

  takeChanges(): { events: McpToolsEvent[]; notes: McpNote[] } {
    const out = { events: this.changes, notes: this.notes };
    this.changes = [];
    this.notes = [];
    this.recorded = this.current();
    return out;
  }

  private current(): Map<string, string> {
    return new Map(this.entries.flatMap((e) => [...e.tools].map(([n, t]) => [n, t.digest] as const)));
  }

  /** A sentence for both; `model` when what the user reads holds a server's own words. */
  private say(user: string, model = user): void {
    this.notes.push({ user, model });
  }

  definitions(permits: (name: string) => boolean): ChatCompletionTool[] {
    const names: string[] = [];
    for (const e of this.entries) for (const n of e.tools.keys()) if (permits(n)) names.push(n);
    const key = `${this.version}\u0000${names.join('\u0000')}`;
    if (this.cached?.key === key) return this.cached.tools;
    const tools = names.map((name) => {
      const { entry, tool } = this.find(name)!;
      return {
        type: 'function' as const,
        function: {
          name,
          description: `[MCP server "${entry.config.name}"] ${tool.description}`.slice(0, 1100),
          parameters: withoutSchemaKey(tool.inputSchema),
        },
      };
    });
    this.cached = { key, tools };
    return tools;
  }

  approvalReason(name: string): string | undefined {
    const found = this.find(name);
    if (!found) return undefined;
    const { entry, tool } = found;
    if (entry.config.autoApprove?.includes(tool.tool)) return undefined;
    if (tool.readOnly === true && tool.destructive !== true) return undefined;
    const says = tool.destructive === true ? 'says it may destroy data' : 'does not say it only reads';
    return `the MCP tool "${tool.tool}" of server "${entry.config.name}" ${says}; it runs only if the user approves`;
  }

  touchesWorkspace(name: string): boolean {
    return this.find(name)?.entry.record.transport === 'stdio';
  }

  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallOutcome> {
    const found = this.find(name);
    if (!found?.entry.connection) {
      const error = `no MCP server of this run offers "${name}" now`;
      return { status: 'error', result: { error }, observation: `Not run: ${error}` };
    }
    const { entry, tool } = found;
    if (this.recorded.get(name) !== tool.digest) {
      const error = `MCP server "${entry.config.name}" changed ${name} since it was recorded; it is offered again as it is now on the next turn`;
      return { status: 'error', result: { error }, observation: `Not run: ${error}` };
    }
    const connection = found.entry.connection;
    const mcp = { server: entry.slug, tool: tool.tool, digest: tool.digest };
    const t0 = Date.now();
    // A stdio server writes the workspace as a command does: its changes are found the same way.
    const before = entry.record.transport === 'stdio' ? snapshot(this.opts.workspace) : undefined;
    const end = await connection.call(tool.tool, args, signal);
    const after = before ? snapshot(this.opts.workspace) : undefined;
    const files = before && after ? changedBetween(before, after) : [];
    const changed = files.length ? { filesChanged: files } : {};
    const durationMs = Date.now() - t0;
    if ('error' in end) {
      const status = end.timeout
        ? ('timeout' as const)
        : signal?.aborted
          ? ('interrupted' as const)
          : ('error' as const);
      const said = (this.opts.mask?.(end.error) ?? end.error).slice(0, 2000);
      const error = `MCP server "${entry.config.name}": ${said}`;
      // The error's words may be the server's: read as its output is, as data.
      const observation = untrusted(entry.config.name, tool.tool, `The call failed: ${said}`);
      return { status, result: { error, durationMs, ...changed }, observation, mcp };
    }
    const r = resultText(end.result);
    const output = { output: r.text, ...(r.truncated ? { outputTruncated: true } : {}), durationMs, ...changed };
    const observation = untrusted(entry.config.name, tool.tool, r.text);
    return r.isError
      ? {
          status: 'error',
          result: { ...output, error: r.text.slice(0, 2000) || 'the tool said it failed' },
          observation,
          mcp,
        }
      : { status: 'ok', result: output, observation, mcp };
  }

  async close(): Promise<void> {
    await Promise.all(this.entries.map((e) => e.connection?.close() ?? Promise.resolve()));
  }

  private entryFor(config: McpServerConfig, slug: string): Entry {
    const record: McpServerRecord = {
      server: slug,
      ...(slug !== config.name ? { label: config.name } : {}),
      transport: config.transport,
      source: config.source,
      ...(config.transport === 'stdio' ? { command: config.command } : { url: safeUrl(config.url) }),
    };
    return { slug, config, record, tools: new Map() };
  }

  private async open(entry: Entry, limits: ConnectionLimits): Promise<void> {
    let endpoint: Endpoint | { refused: string };
    try {
      endpoint = this.endpointOf(entry);
    } catch (e) {
      // A URL that does not parse, a sandbox that cannot be made: this server, not the run.
      endpoint = { refused: (e as Error).message };
    }
    if ('refused' in endpoint) {
      entry.error = endpoint.refused;
      return;
    }
    // A server's own timeout (Cline's `timeout`) bounds its calls instead of the default.
    const own = entry.config.timeoutMs ? { ...limits, callMs: entry.config.timeoutMs } : limits;
    const connection = new McpConnection(entry.config.name, endpoint, own, this.opts.mask);
    try {
      await connection.open();
      entry.connection = connection;
    } catch (e) {
      entry.error = (e as Error).message;
    }
  }

  private endpointOf(entry: Entry): Endpoint | { refused: string } {
    const c = entry.config;
    if (c.transport !== 'stdio') return { transport: c.transport, url: new URL(c.url), headers: c.headers };
    const network = (this.opts.networkGrants ?? []).includes(c.name);
    const how = this.opts.launcher(c, network);
    if ('refused' in how) return how;
    entry.record.confined = how.confined;
    if (how.confined) entry.record.network = network ? 'host' : 'none';
    return { transport: 'stdio', launch: how.launch };
  }

  private failed(entry: Entry, why: string): void {
    entry.error = why;
    this.say(
      `MCP server "${entry.config.name}" could not start: ${why}`,
      `MCP server "${entry.config.name}" could not start; its tools are not offered.`,
    );
    this.changes.push({ type: 'mcp_tools', server: entry.slug, reason: 'stopped', tools: [], error: why, at: now() });
  }

  /** The server's tools read again: named, recorded, and the model told what changed. */
  private relisted(entry: Entry, reason: McpToolsEvent['reason']): void {
    const c = entry.connection!;
    const before = entry.tools;
    const was = new Set(before.keys());
    entry.tools = new Map();
    const omitted = [...c.omitted];
    let omittedCount = c.omittedCount;
    for (const t of c.tools) {
      const name = mcpToolName(entry.slug, t.tool);
      const leave = (why: string) => {
        omittedCount++;
        if (omitted.length < 10) omitted.push(`${shownName(t.tool)} (${why})`);
      };
      if (!name) leave(`the name mcp__${entry.slug}__… would pass 64 characters`);
      else if (entry.tools.has(name)) leave('named like another of its tools');
      else entry.tools.set(name, { ...t, digest: canonicalDigest(t.inputSchema) });
    }
    if (c.capped && !entry.capped) {
      entry.capped = true;
      this.say(
        `MCP server "${entry.config.name}": ${c.capped}.`,
        `MCP server "${entry.config.name}": its list is no longer read again.`,
      );
    }
    // A server that re-announces the same list (as one registering tools at start does) changes nothing.
    if (reason === 'list_changed' && sameTools(before, entry.tools)) return;
    this.version++;
    const tools = [...entry.tools].map(([name, t]) => ({
      name,
      tool: t.tool,
      digest: t.digest,
      ...(t.readOnly !== undefined ? { readOnly: t.readOnly } : {}),
      ...(t.destructive !== undefined ? { destructive: t.destructive } : {}),
    }));
    const error = reason === 'stopped' ? c.stopped : undefined;
    this.changes.push({
      type: 'mcp_tools',
      server: entry.slug,
      reason,
      tools,
      ...(omittedCount ? { omitted: omittedCount } : {}),
      ...(error ? { error } : {}),
      at: now(),
    });
    if (omittedCount)
      this.say(
        `MCP server "${entry.config.name}": left out ${omitted.slice(0, 5).join('; ')}${omittedCount > 5 ? ` and ${omittedCount - 5} more` : ''}.`,
        `MCP server "${entry.config.name}": ${omittedCount} of its tools were left out.`,
      );
    if (reason === 'stopped')
      this.say(
        `MCP server "${entry.config.name}" stopped (${error}); its tools are gone.`,
        `MCP server "${entry.config.name}" stopped; its tools are gone.`,
      );
    else if (reason === 'list_changed') {
      const added = [...entry.tools.keys()].filter((n) => !was.has(n));
      const gone = [...was].filter((n) => !entry.tools.has(n));
      this.say(
        `MCP server "${entry.config.name}" changed its tools${added.length ? `; new: ${added.join(', ')}` : ''}${gone.length ? `; gone: ${gone.join(', ')}` : ''}. Each is checked against the stage again.`,
        // Counts for the model: the new names are the server's choice; the request's tools list them anyway.
        `MCP server "${entry.config.name}" changed its tools: ${added.length} new, ${gone.length} gone. Each is checked against the stage again.`,
      );
    }
  }

  private find(name: string): { entry: Entry; tool: ListedTool & { digest: string } } | undefined {
    for (const entry of this.entries) {
      const tool = entry.tools.get(name);
      if (tool) return { entry, tool };
    }
    return undefined;
  }
}

type Named = ReadonlyMap<string, ListedTool & { digest: string }>;

function sameTools(a: Named, b: Named): boolean {
  if (a.size !== b.size) return false;
  for (const [name, t] of a) {
    const u = b.get(name);
    if (!u || u.digest !== t.digest || u.readOnly !== t.readOnly || u.destructive !== t.destructive) return false;
    if (u.description !== t.description) return false;
  }
  return true;
}

/** A URL as the header may show it: no credentials, no path, no query. */
function safeUrl(raw: string): string {
  try {
    // The origin only: a key rides in some servers' paths (…/s/KEY/mcp) as in others' queries.
    return new URL(raw).origin;
  } catch {
    return '(not a URL)';
  }
}

/** `$schema` tells the model nothing and costs tokens on every request. */
function withoutSchemaKey(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}

const now = (): string => new Date().toISOString();
