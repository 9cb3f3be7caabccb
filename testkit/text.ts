/**
 * What a message holds, as text: a string as it is, nothing as '', and
 * anything else (content parts, markup) as its JSON. Deliberately not
 * String(): that reads parts as "[object Object]" and hides what came.
 */
export function textOf(content: unknown): string {
  return typeof content === 'string'
    ? content
    : content === undefined || content === null
      ? ''
      : JSON.stringify(content);
}
