/**
 * fast-check, seeded the same way in every property suite: test files import
 * `fc` from here, never from 'fast-check' (test/architecture.test.ts checks).
 *
 * `LAR_PROPERTY_SEED=N` fixes the seed of every property in the process, so a
 * failure CI reports is replayed with that one variable. Unset, each process
 * draws its own seed (random runs locally), prints it, and fast-check names it
 * again in any failure message.
 */
import fc from 'fast-check';

export const SEED_VARIABLE = 'LAR_PROPERTY_SEED';

/** The seed in `value`, or why it is not one. */
export function parseSeed(value: string): number {
  if (!/^-?\d{1,10}$/.test(value.trim()))
    throw new Error(`${SEED_VARIABLE} must be a whole number, got ${JSON.stringify(value)}`);
  const n = Number(value.trim());
  if (n < -0x80000000 || n > 0xffffffff) throw new Error(`${SEED_VARIABLE} must fit in 32 bits, got ${value}`);
  return n | 0;
}

const given = process.env[SEED_VARIABLE];
export const propertySeed = given !== undefined && given !== '' ? parseSeed(given) : (Math.random() * 0x100000000) | 0;

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: propertySeed });
// Printed as given (CI's seed is unsigned; fast-check takes it as a signed 32-bit number: the same seed).
const shown = given !== undefined && given !== '' ? given.trim() : String(propertySeed);
process.stdout.write(`property seed ${shown} (replay: ${SEED_VARIABLE}=${shown})\n`);

export { fc };
export default fc;
