/** Shared passing verdicts whose reason names part of the workflow (a stage, a target, an exit condition). */
import { pass, type CheckId, type Verdict } from './checks';
import type { VerdictCache } from './types';

/**
 * Passing verdicts depend only on the workflow, so each distinct one is made
 * once and shared (clones share the cache too): one object per passing check
 * per step is what made long runs slow. The reason is built the first time
 * only, by a function of the key that captures nothing, so a call allocates
 * nothing (a closure per call cost more than the check).
 */
export class PassCache implements VerdictCache {
  private readonly byCheck = new Map<CheckId, Map<unknown, Map<string, Verdict>>>();

  pass<K>(check: CheckId, key: K, reason: (key: K, subkey: string) => string, subkey = ''): Verdict {
    let byKey = this.byCheck.get(check);
    if (!byKey) this.byCheck.set(check, (byKey = new Map<unknown, Map<string, Verdict>>()));
    let bySub = byKey.get(key);
    if (!bySub) byKey.set(key, (bySub = new Map<string, Verdict>()));
    let v = bySub.get(subkey);
    if (!v) bySub.set(subkey, (v = Object.freeze(pass(check, reason(key, subkey))) as Verdict));
    return v;
  }
}
