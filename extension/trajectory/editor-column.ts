/**
 * Which editor group a trajectory opens in: the group that already shows it,
 * else the active one. Opening "beside" from the side bar made a new group on
 * every click, empty ones included. Pure, so it is tested without VS Code.
 */

/** An editor group: its column and the documents its tabs show. */
export interface GroupTabs {
  column: number;
  uris: readonly string[];
}

/** The column to show `uri` in: the active group if it has it, else the first group that has it, else the active group. */
export function columnFor(uri: string, groups: readonly GroupTabs[], active: number): number {
  const holding = groups.filter((g) => g.uris.includes(uri));
  if (holding.some((g) => g.column === active)) return active;
  return holding[0]?.column ?? active;
}
