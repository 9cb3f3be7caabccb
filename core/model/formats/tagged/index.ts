/**
 * Reads `<tool_call>` blocks, the wrapper the Qwen family uses for both of
 * its call forms: a JSON object (Hermes, Qwen2.5, Qwen3) or the XML form
 * `<function=NAME><parameter=KEY>VALUE</parameter></function>` (Qwen3-Coder,
 * Qwen3.5, Qwen3.6). Either body is read in either block, since models drift
 * between them. The reading follows vLLM's parsers (an unclosed last block
 * runs to the end; a missing `</parameter>` ends at the next parameter or
 * `</function>`; exactly one newline is stripped on each side of a value;
 * values typed by the tool's schema) and goes further where models slip:
 * a closing tag counts only where the structure allows it, so a value that
 * itself holds `</tool_call>` or `</parameter>` (editing this very file) is
 * kept whole; a stray or missing tag, prose inside a block, a body without
 * its opening tag are each repaired and named.
 */
import { skipSpace, tidyProse } from '../calls';
import { preview } from '../json-repair';
import { uniqueRepairs, type RepairId } from '../repairs';
import type { ParsedContent, TextCall, TextFormatId, ToolSpec } from '../types';
import { decodeJson, decodeJsonCalls, firstJsonStart, readJsonBody, trailingJsonCall } from './json-body';
import { CALL_CLOSE, CALL_OPEN, finder, FN_OPEN, nextOf, type Find } from './scan';
import { readFunction } from './xml-body';

export function parseTagged(content: string, tools: readonly ToolSpec[], format: TextFormatId): ParsedContent {
  // Each call is named by the form it was written in: a JSON body is Hermes's, an XML one the Qwen3-Coder family's.
  const jsonForm: TextFormatId = 'hermes';
  const xmlForm: TextFormatId = format === 'qwen3_coder' || format === 'qwen3_5' ? format : 'qwen3_5';
  const prose: string[] = [];
  const calls: TextCall[] = [];
  const turn: RepairId[] = [];
  const find = finder(content);
  let at = 0;
  while (at < content.length) {
    const open = find(CALL_OPEN, at);
    const stray = find(CALL_CLOSE, at);
    const bareFn = find(FN_OPEN, at);
    // A `<function=` block with no `<tool_call>` around it (the model left the wrapper off).
    if (bareFn >= 0 && (open < 0 || bareFn < open) && (stray < 0 || bareFn < stray)) {
      prose.push(content.slice(at, bareFn));
      const fn = readFunction(content, bareFn, tools, xmlForm, find);
      fn.call.repairs.unshift('missing_open_tag');
      calls.push(fn.call);
      at = skipClose(content, fn.end, fn.call.repairs, prose, find);
      continue;
    }
    if (stray >= 0 && (open < 0 || stray < open)) {
      const before = content.slice(at, stray);
      const json = trailingJsonCall(before);
      if (json) {
        // `{"name": …}</tool_call>`: the body was written, its opening tag was not.
        prose.push(before.slice(0, json.start));
        const call = decodeJson(json.text, jsonForm);
        call.repairs.unshift('missing_open_tag');
        calls.push(call);
      } else {
        prose.push(before);
        turn.push('extra_close_tag');
      }
      at = stray + CALL_CLOSE.length;
      continue;
    }
    if (open < 0) {
      prose.push(content.slice(at));
      break;
    }
    prose.push(content.slice(at, open));
    at = readBlock(content, open + CALL_OPEN.length, tools, { json: jsonForm, xml: xmlForm }, calls, prose, find);
  }
  return { text: tidyProse(prose), calls, repairs: uniqueRepairs(turn) };
}

/** Reads one block's body from `start`; returns where reading goes on. */
function readBlock(
  content: string,
  start: number,
  tools: readonly ToolSpec[],
  forms: { json: TextFormatId; xml: TextFormatId },
  calls: TextCall[],
  prose: string[],
  find: Find,
): number {
  const blockEnd = nextOf(content, start, [CALL_CLOSE, CALL_OPEN], find);
  let pos = start;
  let found = 0;
  const repairs: RepairId[] = [];
  const lead = content.slice(pos, blockEnd);
  const fnFound = find(FN_OPEN, pos);
  const fnAt = fnFound >= 0 && fnFound < blockEnd ? fnFound - pos : -1;
  const jsonAt = firstJsonStart(lead);
  const bodyAt = fnAt >= 0 && (jsonAt < 0 || fnAt < jsonAt) ? fnAt : jsonAt;
  if (bodyAt < 0) {
    // A block with no call in it: its text is prose, the empty call an error the model sees.
    const text = lead.trim();
    calls.push({
      name: '',
      args: null,
      argsError: text ? `the <tool_call> block holds no call: ${preview(text)}` : 'the <tool_call> block is empty',
      raw: lead,
      repairs: [],
      format: forms.json,
    });
    return closeAfter(content, blockEnd);
  }
  if (lead.slice(0, bodyAt).trim()) {
    prose.push(lead.slice(0, bodyAt));
    repairs.push('prose_inside_call');
  }
  pos += bodyAt;
  for (;;) {
    if (content.startsWith(FN_OPEN, pos)) {
      const fn = readFunction(content, pos, tools, forms.xml, find);
      fn.call.repairs.unshift(...repairs);
      calls.push(fn.call);
      pos = fn.end;
    } else {
      const json = readJsonBody(content, pos);
      for (const call of decodeJsonCalls(json.text, forms.json)) {
        call.repairs = uniqueRepairs([...repairs, ...json.repairs, ...call.repairs]);
        calls.push(call);
      }
      pos = json.end;
    }
    found++;
    repairs.length = 0;
    // Another function in the same block (vLLM reads them all), else the close.
    const ws = skipSpace(content, pos);
    if (
      content.startsWith(FN_OPEN, ws) ||
      (content[ws] === '{' && found > 0 && content.startsWith('"name"', skipSpace(content, ws + 1)))
    ) {
      pos = ws;
      continue;
    }
    break;
  }
  const last = calls[calls.length - 1]!;
  return skipClose(content, pos, last.repairs, prose, find);
}

/** After a call's body: consumes `</tool_call>` (prose before it moved out), or notes it missing. */
function skipClose(content: string, pos: number, repairs: RepairId[], prose: string[], find: Find): number {
  const close = find(CALL_CLOSE, pos);
  const next = nextOf(content, pos, [CALL_OPEN, FN_OPEN], find);
  if (close >= 0 && close <= next) {
    const between = content.slice(pos, close);
    if (between.trim()) {
      prose.push(between);
      if (!repairs.includes('prose_inside_call')) repairs.push('prose_inside_call');
    }
    return close + CALL_CLOSE.length;
  }
  if (!repairs.includes('missing_open_tag')) repairs.push('missing_close_tag');
  return pos;
}

function closeAfter(content: string, blockEnd: number): number {
  return content.startsWith(CALL_CLOSE, blockEnd) ? blockEnd + CALL_CLOSE.length : blockEnd;
}
