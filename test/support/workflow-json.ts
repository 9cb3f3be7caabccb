import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const DEFAULT_WORKFLOW_FILE = resolve(__dirname, '../../..', 'core/workflow/default-coding.larflow.json');

/**
 * The default workflow as its JSON file holds it: the parts tests change,
 * typed loosely (a tool or a stage is any string) so that a test can break
 * the workflow on purpose and see it refused.
 */
export interface WorkflowJson {
  start: string;
  stages: { id: string; tools: string[]; budget: number }[];
  transitions: Record<string, string[]>;
  outcome: { command: string };
  policy: { commands: { deny: string[] } };
  sandbox?: unknown;
}

/** A fresh copy of the default workflow's JSON, to change. */
export function defaultWorkflowJson(): WorkflowJson {
  return JSON.parse(readFileSync(DEFAULT_WORKFLOW_FILE, 'utf8')) as WorkflowJson;
}
