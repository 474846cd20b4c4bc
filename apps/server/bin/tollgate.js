#!/usr/bin/env node
// The `tollgate` command. Tollgate runs its TypeScript sources through tsx (no build step).
import './register.mjs';

await import('../src/cli/main.ts');
