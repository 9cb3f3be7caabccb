/**
 * The chat protocol as JSON Schemas, made from its zod schemas (core/protocol/chat.ts). Not part of the bundle:
 * esbuild.mjs runs it at build time and hands the result to the bundle as the module `lar:chat-protocol`, which
 * webview/protocol-check.ts compiles. `io: 'input'`: the messages as safeParse accepts them.
 */
import { z } from 'zod';
import { FromWebview, ToWebview } from '../core/protocol/chat';

export interface ChatProtocolSchemas {
  fromWebview: object;
  toWebview: object;
}

export function chatProtocolSchemas(): ChatProtocolSchemas {
  return {
    fromWebview: z.toJSONSchema(FromWebview, { io: 'input' }),
    toWebview: z.toJSONSchema(ToWebview, { io: 'input' }),
  };
}
