/**
 * "Test connection": one tool-calling probe and a report of what came back,
 * with the format to set and what to fix on the server. Apart from the
 * client, which it uses only as any caller would.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ModelError, type ModelErrorKind } from './errors';
import {
  FORMATS,
  guessFormat,
  isTextFormat,
  SERVER_PARSERS,
  type TextFormatId,
  type ToolFormatSetting,
  type ToolSpec,
  type WireFormat,
} from './formats';
import type { ModelClientOptions } from './options';
import type { ModelReply } from './reply';
import { DEFAULT_CONTEXT_WINDOW, type ContextWindow, type ServedModel } from './server-info';
import { maskEndpoint } from '../secrets/endpoint';

export interface ConnectionReport {
  endpoint: string;
  ok: boolean;
  models: string[];
  model?: string;
  /** How tool calls came back from the probe. */
  toolCalls: 'native' | 'text' | 'none';
  /** The form a text call came in, when one did. */
  textFormat?: TextFormatId;
  /** The format to set, from what came back and the model's family. */
  suggestedFormat?: ToolFormatSetting;
  /** The model's context window, and where the figure came from. */
  contextWindow?: ContextWindow;
  /** Whether the server sent reasoning apart from the answer (a reasoning parser runs). */
  reasoning?: boolean;
  /** What failed or needs attention, each a sentence a person can act on. */
  problems: string[];
  error?: ModelErrorKind;
}

/** What the probe asks of a client (a ModelClient). */
export interface ProbedClient {
  servedModels(signal?: AbortSignal): Promise<ServedModel[]>;
  resolveModel(signal?: AbortSignal, served?: readonly ServedModel[]): Promise<string>;
  contextWindow(signal?: AbortSignal, served?: readonly ServedModel[]): Promise<ContextWindow>;
  complete(req: {
    messages: ChatCompletionMessageParam[];
    tools: ChatCompletionTool[];
    format: WireFormat;
    maxTokens: number;
    signal?: AbortSignal;
  }): Promise<ModelReply>;
  classify(e: unknown): ModelError;
}

/**
 * "Test connection": lists the models and sends one tool-calling probe, and
 * says exactly what failed (unreachable, 401, model not found, no tool
 * parser on the server, a model that does not call tools).
 */
export async function probeConnection(
  client: ProbedClient,
  opts: Pick<ModelClientOptions, 'endpoint' | 'toolFormat'>,
  signal?: AbortSignal,
): Promise<ConnectionReport> {
  const report: ConnectionReport = {
    endpoint: maskEndpoint(opts.endpoint),
    ok: false,
    models: [],
    toolCalls: 'none',
    problems: [],
  };
  try {
    // One listing serves the models, the model and its window.
    const served = await client.servedModels(signal);
    report.models = served.map((m) => m.id);
    report.model = await client.resolveModel(signal, served);
    if (!report.models.includes(report.model)) {
      throw new ModelError(
        'model_not_found',
        `the server does not serve "${report.model}" (it serves: ${report.models.join(', ') || 'nothing'})`,
      );
    }
    report.contextWindow = await client.contextWindow(signal, served);
    const setting = opts.toolFormat ?? 'auto';
    const family = guessFormat(report.model) ?? 'hermes';
    const reply = await sendProbe(client, report, setting, family, signal);
    readProbeReply(report, reply, setting, family);
    if (report.contextWindow.source === 'default') {
      report.problems.push(
        `the server does not say how long the model's context window is: ${DEFAULT_CONTEXT_WINDOW} tokens are assumed until a refusal says otherwise. Set the context length setting (lar run: --context-length) to the server's --max-model-len / --context-length.`,
      );
    }
    report.ok = report.toolCalls !== 'none';
  } catch (e) {
    const err = client.classify(e);
    report.error = err.kind;
    report.problems.push(err.message);
  }
  return report;
}

/** The probe in the format set; where a server without a tool parser refuses tools in the API, in the model family's text format. */
async function sendProbe(
  client: ProbedClient,
  report: ConnectionReport,
  setting: ToolFormatSetting,
  family: TextFormatId,
  signal: AbortSignal | undefined,
): Promise<ModelReply> {
  const probe = (format: WireFormat) =>
    client.complete({
      messages: PROBE_MESSAGES(format),
      tools: [PROBE_TOOL],
      format,
      maxTokens: 1024,
      ...(signal ? { signal } : {}),
    });
  try {
    return await probe(isTextFormat(setting) ? setting : 'native');
  } catch (e) {
    const err = client.classify(e);
    if (err.kind !== 'no_tool_parser' || isTextFormat(setting)) throw err;
    // vLLM without a tool parser refuses tools in the API: what a text format would do.
    report.problems.push(`${err.message}.`);
    const reply = await probe(family);
    if (setting === 'auto')
      report.problems.push(`With "auto", runs switch to the ${family} text format by themselves on this server.`);
    return reply;
  }
}

/** How the probe's call came back, the format to set for it, and what to fix on the server. */
function readProbeReply(
  report: ConnectionReport,
  reply: ModelReply,
  setting: ToolFormatSetting,
  family: TextFormatId,
): void {
  report.reasoning = reply.reasoning.length > 0;
  const ping = reply.toolCalls.find((c) => c.name === 'ping');
  if (ping?.via === 'native') {
    report.toolCalls = 'native';
    report.suggestedFormat = setting === 'native' ? 'native' : 'auto';
  } else if (ping?.via === 'text') {
    report.toolCalls = 'text';
    if (ping.format) report.textFormat = ping.format;
    const written = ping.format ?? family;
    report.suggestedFormat = isTextFormat(setting)
      ? setting
      : written === 'qwen3_5' && family === 'qwen3_coder'
        ? family
        : written;
    const parser = SERVER_PARSERS[written];
    if (!isTextFormat(setting)) {
      report.problems.push(
        `the model wrote its tool call as text (${written}) instead of a structured call: the server parsed none. Runs still work (calls in the text are read), but start vLLM with --enable-auto-tool-choice --tool-call-parser ${parser.vllm} (SGLang: --tool-call-parser ${parser.sglang}), or set the tool-call format to "${report.suggestedFormat}".`,
      );
    }
  } else {
    report.problems.push(
      `the model answered without calling the probe tool${reply.text ? ` ("${reply.text.slice(0, 80)}")` : ''}: it may not support tool calls`,
    );
    report.suggestedFormat = family;
  }
}

const PROBE_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'ping',
    description: 'Answers pong.',
    parameters: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] },
  },
};

function PROBE_MESSAGES(format: WireFormat): ChatCompletionMessageParam[] {
  const system = 'You are a connection probe. Answer only by calling the ping tool.';
  const user = 'Call ping with {"echo": "lar"}.';
  if (format === 'native')
    return [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ];
  const p = FORMATS[format].prompt(system, user, [(PROBE_TOOL as { function: ToolSpec }).function]);
  return [
    { role: 'system', content: p.system },
    { role: 'user', content: p.task },
  ];
}
