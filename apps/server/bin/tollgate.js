#!/usr/bin/env node
// The `tollgate` command. With NODE_ENV=production it runs the compiled build (`npm run build` →
// apps/server/dist: plain JavaScript, no loader thread, no source transform at start); otherwise it
// runs our TypeScript sources through tsx, so a development checkout never runs a stale build.
import { existsSync } from 'node:fs';

if (process.env.NODE_ENV === 'production') {
  const compiled = new URL('../dist/tollgate.js', import.meta.url);
  if (!existsSync(compiled)) {
    console.error('tollgate: NODE_ENV=production runs the compiled build, and apps/server/dist/ has none: run `npm run build` first');
    process.exit(1);
  }
  await import(compiled.href);
} else {
  await import('./register.mjs');
  await import('../src/cli/main.ts');
}
