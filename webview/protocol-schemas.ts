/**
 * The chat protocol as JSON Schemas, made from its zod schemas (core/protocol/chat.ts). Not part of the bundle:
 * esbuild.mjs runs it at build time and hands the result to the bundle as the module `lar:chat-protocol`, which
 * webview/protocol-check.ts compiles. `io: 'input'`: the messages as safeParse accepts them.
 */
import { z } from 'zod';
import { FromWebview, ToWebview } from '../core/protocol/chat';
import { compileSchema } from './protocol-check';

export interface ChatProtocolSchemas {
  fromWebview: object;
  toWebview: object;
}

/** The schemas, each compiled once here: a keyword the webview's checker cannot check fails the build. */
export function chatProtocolSchemas(): ChatProtocolSchemas {
  const schemas = {
    fromWebview: z.toJSONSchema(FromWebview, { io: 'input' }),
    toWebview: z.toJSONSchema(ToWebview, { io: 'input' }),
  };
  compileSchema(schemas.fromWebview);
  compileSchema(schemas.toWebview);
  return schemas;
}
