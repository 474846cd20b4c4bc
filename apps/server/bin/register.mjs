// Loaders of the `tollgate` command (tollgate.js imports this first): tsx runs our TypeScript
// sources (no build step), and third-party-source-maps.mjs keeps only our own source maps.
import { register as registerHook } from 'node:module';
import { register } from 'tsx/esm/api';

// Before tsx: hooks registered later run first, so this one sees what tsx passes on.
registerHook('./third-party-source-maps.mjs', import.meta.url);
register();
