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
    return {
      type: 'function',
      function: { name, description: TOOL_DESCRIPTIONS[name], parameters: withoutSafeIntegerBound(parameters) },
    };
  });
}

/**
 * zod writes `maximum: 9007199254740991` on every integer (JavaScript's safe
 * bound): noise in the prompt of every request, telling the model nothing.
 */
function withoutSafeIntegerBound(schema: Record<string, unknown>): Record<string, unknown> {
  const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!props) return schema;
  const clean: Record<string, Record<string, unknown>> = {};
  for (const [k, p] of Object.entries(props)) {
    const { maximum, ...rest } = p;
    clean[k] = maximum === Number.MAX_SAFE_INTEGER ? rest : p;
  }
  return { ...schema, properties: clean };
}
