import { z } from 'zod';

/**
 * The agent's tools. The verifier knows exactly these; a workflow that names any
 * other tool is not well-formed, and a call to any other tool is a violation.
 */
export const TOOL_NAMES = [
  'run_command',
  'read_file',
  'write_file',
  'edit_file',
  'list_files',
  'search',
  'enter_stage',
  'submit',
] as const;

export const ToolName = z.enum(TOOL_NAMES);
export type ToolName = z.infer<typeof ToolName>;

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

const NonNegInt = z.number().int().nonnegative();
const PositiveInt = z.number().int().positive();
/** A workspace-relative path; the path policy decides whether it is allowed. */
const PathArg = z.string().min(1);

/**
 * Argument schemas. Strict: an unknown key is an error, so a model that invents
 * arguments is told so instead of having them silently ignored. The Lean checker
 * implements the same table (lean/Lar/Tools.lean).
 */
export const ToolArgs = {
  run_command: z.strictObject({
    command: z.string().min(1),
    cwd: PathArg.optional(),
    timeoutMs: PositiveInt.optional(),
  }),
  read_file: z.strictObject({
    path: PathArg,
    startLine: PositiveInt.optional(),
    endLine: PositiveInt.optional(),
  }),
  write_file: z.strictObject({
    path: PathArg,
    content: z.string(),
  }),
  edit_file: z.strictObject({
    path: PathArg,
    search: z.string().min(1),
    replace: z.string(),
  }),
  list_files: z.strictObject({
    path: PathArg.optional(),
    recursive: z.boolean().optional(),
  }),
  search: z.strictObject({
    pattern: z.string().min(1),
    path: PathArg.optional(),
    regex: z.boolean().optional(),
  }),
  enter_stage: z.strictObject({
    stage: z.string().min(1),
    reason: z.string().optional(),
  }),
  submit: z.strictObject({
    summary: z.string().optional(),
  }),
} satisfies Record<ToolName, z.ZodType>;

export type ToolArgsOf<T extends ToolName> = z.infer<(typeof ToolArgs)[T]>;

/** Argument keys that name a path and so fall under the path policy. */
export const PATH_ARGS: Record<ToolName, readonly string[]> = {
  run_command: ['cwd'],
  read_file: ['path'],
  write_file: ['path'],
  edit_file: ['path'],
  list_files: ['path'],
  search: ['path'],
  enter_stage: [],
  submit: [],
};

/** One-line descriptions, shared by the docs, the CLI and the model's tool list. */
export const TOOL_DESCRIPTIONS: Record<ToolName, string> = {
  run_command: 'Run a shell command in the workspace terminal and return its exit code and output.',
  read_file: 'Read a workspace file, optionally a range of lines.',
  write_file: 'Create or overwrite a workspace file with the given content.',
  edit_file: 'Replace exactly one occurrence of `search` with `replace` in a workspace file.',
  list_files: 'List the files under a workspace folder.',
  search: 'Search the workspace for a text (or regular expression) pattern.',
  enter_stage: 'Move to another stage of the workflow; the transition must be legal.',
  submit: 'Finish the task from a terminal stage; the workflow outcome check then runs.',
};
