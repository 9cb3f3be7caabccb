/**
 * What an HTTP MCP server may be sent and may send back: requests only to the URL the configuration
 * names (the SSE transport's message endpoint: its origin), no redirect followed elsewhere, and a
 * bound on each answer (a JSON body whole, an event stream per event) so a flood cannot fill memory.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

export interface HttpBounds {
  /** `exact`: the configured URL itself (streamable HTTP); `origin`: any path of its origin (SSE's endpoint). */
  reach: 'exact' | 'origin';
  maxMessageBytes: number;
  onOversized: (bytes: number) => void;
}

const withoutQuery = (u: URL): string => `${u.origin}${u.pathname}`;

/** A fetch that refuses every other address and cuts an oversized answer off. */
export function confinedFetch(configured: URL, bounds: HttpBounds, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const target = new URL(url);
    const allowed =
      bounds.reach === 'exact'
        ? withoutQuery(target) === withoutQuery(configured)
        : target.origin === configured.origin;
    if (!allowed)
      // Origins only: a key may ride in either path.
      throw new Error(
        `refused a request to ${target.origin}: this server is reached only at the URL configured for it (${configured.origin})`,
      );
    // A redirect is not followed: it would reach an address the configuration does not name.
    const response = await base(url, { ...init, redirect: 'manual' });
    if (response.status >= 300 && response.status < 400)
      throw new Error(`the server answered with a redirect (${response.status}), which is not followed`);
    if (!response.body) return response;
    const stream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    return new Response(response.body.pipeThrough(bounded(bounds, stream)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Counts bytes (for a stream, since the last event's end) and errors the body past the bound. */
function bounded(bounds: HttpBounds, stream: boolean): TransformStream<Uint8Array, Uint8Array> {
  let count = 0;
  let lastWasNewline = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (stream) {
        // An event ends at a blank line: count from the last one this chunk holds.
        let end = -1;
        for (let i = 0; i < chunk.length; i++) {
          if (chunk[i] === 0x0a) {
            if (lastWasNewline) end = i;
            lastWasNewline = true;
          } else if (chunk[i] !== 0x0d) lastWasNewline = false;
        }
        count = end >= 0 ? chunk.length - end - 1 : count + chunk.length;
      } else count += chunk.length;
      if (count > bounds.maxMessageBytes) {
        bounds.onOversized(count);
        controller.error(new Error(`the server's answer passed ${bounds.maxMessageBytes} bytes and was cut off`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
