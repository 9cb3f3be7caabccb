/**
 * The endpoint as anything shows or records it: an inference server's URL
 * may carry a password (`http://user:pass@host/v1`) or a key in its query
 * (`?api_key=…`), and a start line, an error message, the chat or a
 * trajectory shared for training must show neither. Every line that prints
 * an endpoint goes through here.
 */

/**
 * Query parameters shown as they are; every other one's value is masked (a key may be called
 * anything: `api_key`, `code` for Azure Functions, `sig`, `X-Amz-Signature` …).
 */
const SHOWN_PARAM = /^(?:api[-_]?version|version|v|model|region|deployment|format|stream|timeout)$/i;
const SECRET_PARAM = { test: (k: string): boolean => !SHOWN_PARAM.test(k) };

/** `endpoint` without the credentials it may carry; text that is not a URL is masked the same way as far as it looks like one. */
export function maskEndpoint(endpoint: string): string {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    return maskUrlsIn(endpoint);
  }
  if (!u.username && !u.password && ![...u.searchParams.keys()].some((k) => SECRET_PARAM.test(k))) return endpoint;
  const auth = u.username || u.password ? '***@' : '';
  let query = '';
  if (u.search) {
    const parts: string[] = [];
    for (const [k, v] of u.searchParams)
      parts.push(`${encodeURIComponent(k)}=${SECRET_PARAM.test(k) ? '***' : encodeURIComponent(v)}`);
    query = `?${parts.join('&')}`;
  }
  return `${u.protocol}//${auth}${u.host}${u.pathname}${query}${u.hash}`;
}

/** Every URL in a free text (an error message that names the endpoint) with its credentials masked. */
export function maskUrlsIn(text: string): string {
  return (
    text
      // user:password@ (or a lone token@) after a scheme.
      .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, '$1***@')
      // A query parameter of a URL, but those known to be harmless.
      .replace(/([?&]([^\s=&#]+)=)[^\s&#)\]'"<>]*/g, (all: string, head: string, name: string) =>
        SHOWN_PARAM.test(name) ? all : `${head}***`,
      )
  );
}
