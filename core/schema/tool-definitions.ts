import { z } from 'zod';
import { TOOL_DESCRIPTIONS, TOOL_NAMES, ToolArgs, type ToolName } from './tools';

export interface FunctionToolDefinition {
  type: 'function';
  function: { name: ToolName; description: string; parameters: Record<string, unknown> };
}

/**
 * The tools in OpenAI function-calling form, generated from the same zod
 * schemas the verifier judges arguments with, so what the model is told and
 * what is checked cannot drift apart.
 */
export function toolDefinitions(names: readonly ToolName[] = TOOL_NAMES): FunctionToolDefinition[] {
  return names.map((name) => {
    const { $schema: _ignored, ...parameters } = z.toJSONSchema(ToolArgs[name]) as Record<string, unknown>;
    return { type: 'function', function: { name, description: TOOL_DESCRIPTIONS[name], parameters } };
  });
}
