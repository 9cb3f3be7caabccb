/**
 * How numbers are written wherever a person reads them: rewards, returns and
 * token counts, alike in the gutter, the hovers, the status bar and the chat.
 * No imports: the chat webview's bundle uses it too.
 */

/** `+1`, `0`, `−1` (a real minus sign, as in the docs). */
export function formatReward(r: number): string {
  return r > 0 ? `+${r}` : r < 0 ? `−${-r}` : '0';
}

/** A return or other real number, at most 3 decimals, no trailing zeros. */
export function formatNumber(x: number): string {
  const s = Number(x.toFixed(3)).toString();
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}

/** 32768 as "32k", 131072 as "128k", 18234 as "18.2k": how windows and token counts are spoken of. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  const k = n / 1024;
  if (Number.isInteger(k)) return `${k}k`;
  return `${(n / 1000).toFixed(n < 100_000 ? 1 : 0).replace(/\.0$/, '')}k`;
}
