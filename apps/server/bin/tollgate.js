#!/usr/bin/env node
// The `tollgate` command. With NODE_ENV=production it runs the compiled build (`npm run build` →
// apps/server/dist: plain JavaScript, nothing transformed at start); otherwise it runs our
// TypeScript sources as they are, with Node's own type stripping (Node ≥ 22.18; our sources use only
// erasable syntax, which tsconfig's `erasableSyntaxOnly` enforces), so a development checkout never
// runs a stale build and needs no loader: stack traces name the .ts lines because stripping keeps
// every position.
import { existsSync } from 'node:fs';

if (process.env.NODE_ENV === 'production') {
  const compiled = new URL('../dist/tollgate.js', import.meta.url);
  if (!existsSync(compiled)) {
    console.error('tollgate: NODE_ENV=production runs the compiled build, and apps/server/dist/ has none: run `npm run build` first');
    process.exit(1);
  }
  await import(compiled.href);
} else {
  if (!process.features.typescript) {
    console.error(`tollgate: running from source needs Node.js ≥ 22.19 (type stripping); this is ${process.version}. Use \`npm start\` (it runs the project's pinned Node 24) or the compiled build (NODE_ENV=production).`);
    process.exit(1);
  }
  await import('../src/cli/main.ts');
}
