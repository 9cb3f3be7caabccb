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
    command: z.string().min(1).describe('The shell command line to run.'),
    cwd: PathArg.optional().describe('Workspace-relative folder to run it in (default: the workspace).'),
    timeoutMs: PositiveInt.optional().describe('Milliseconds before the command is stopped (default 120000).'),
  }),
  read_file: z.strictObject({
    path: PathArg.describe('Workspace-relative path of the file.'),
    startLine: PositiveInt.optional().describe('First line to read, from 1.'),
    endLine: PositiveInt.optional().describe('Last line to read.'),
  }),
  write_file: z.strictObject({
    path: PathArg.describe('Workspace-relative path of the file to create or replace.'),
    content: z.string().describe('The whole new content of the file.'),
  }),
  edit_file: z.strictObject({
    path: PathArg.describe('Workspace-relative path of the file to edit.'),
    search: z.string().min(1).describe('Exact text to find; it must occur exactly once in the file.'),
    replace: z.string().describe('Text to put in its place.'),
  }),
  list_files: z.strictObject({
    path: PathArg.optional().describe('Workspace-relative folder (default: the workspace).'),
    recursive: z.boolean().optional().describe('List the folders below it too.'),
  }),
  search: z.strictObject({
    pattern: z.string().min(1).describe('Text to find in the files.'),
    path: PathArg.optional().describe('Workspace-relative folder or file to search in.'),
    regex: z.boolean().optional().describe('Read the pattern as a regular expression.'),
  }),
  enter_stage: z.strictObject({
    stage: z.string().min(1).describe('Id of the workflow stage to move to.'),
    reason: z.string().optional().describe('Why, in a sentence.'),
  }),
  submit: z.strictObject({
    summary: z.string().optional().describe('What was done.'),
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
  run_command:
    'Run a shell command in the workspace terminal and return its exit code and output. The folder it ends in and the variables it exports carry over to the next command; functions, aliases and unexported variables do not.',
  read_file: 'Read a workspace file, optionally a range of lines.',
  write_file: 'Create or overwrite a workspace file with the given content.',
  edit_file: 'Replace exactly one occurrence of `search` with `replace` in a workspace file.',
  list_files: 'List the files under a workspace folder.',
  search: 'Search the workspace for a text (or regular expression) pattern.',
  enter_stage: 'Move to another stage of the workflow; the transition must be legal.',
  submit: 'Finish the task from a terminal stage; the workflow outcome check then runs.',
};
