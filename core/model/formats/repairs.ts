/**
 * The slips in a model's tool call that are repaired rather than refused.
 * Each has a stable id, written on the step in the trajectory (`repairs`),
 * so a reward or a researcher can see a sloppy call that still ran.
 */
export const REPAIRS = {
  code_fence: 'the JSON was wrapped in a ``` code fence',
  trailing_comma: 'a comma stood before a closing bracket',
  python_literal: 'True/False/None were written for true/false/null',
  unclosed_json: 'closing brackets were missing at the end of the JSON',
  extra_closer: 'the JSON had closing brackets past its end',
  arguments_as_string: 'the arguments were a JSON string holding the object',
  missing_close_tag: 'a closing tag of the call was missing',
  extra_close_tag: 'a closing tag stood with no call open',
  missing_open_tag: 'the call was not inside its opening tag',
  prose_inside_call: 'prose stood inside the call block and was moved out of it',
  parameter_type: 'a parameter value did not match its schema type as written and was converted',
  duplicate_call: 'the same call came both as a structured call and as text; it ran once',
} as const;

export type RepairId = keyof typeof REPAIRS;

export const REPAIR_IDS = Object.keys(REPAIRS) as RepairId[];

/** Each repair once, in the order first made. */
export function uniqueRepairs(list: readonly RepairId[]): RepairId[] {
  return [...new Set(list)];
}
