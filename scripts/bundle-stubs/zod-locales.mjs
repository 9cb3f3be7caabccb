// Stands in for zod's locales index in the bundles. zod's `z` namespace re-exports every locale (~260 KB
// minified) for `z.config(z.locales.xx())`, which lar never calls; English, the one zod sets by itself,
// stays reachable as `z.locales.en`. Any other locale is undefined here: calling one fails loudly.
export { default as en } from 'zod/v4/locales/en.js';
