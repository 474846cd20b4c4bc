// Development-only packages (the local chain, the local SVM, tsx, esbuild) stay out of what a
// production install runs: not in the server's dependencies (nor those of the workspaces it
// depends on), and not in the compiled gateway's chunks outside the dev profile (scripts/build.mjs,
// whose rules live in scripts/build-graph.mjs and are checked here on the same bundle, unwritten).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { build, type Metafile } from 'esbuild';
// @ts-expect-error: a plain JavaScript build script (no declarations)
import { bundleOptions, DEV_ONLY_PACKAGES, productionGraphProblems, ROOT, serverDependencies } from '../../../../scripts/build-graph.mjs';

const manifest = (dir: string) => JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> };
const WORKSPACES = new Map<string, string>((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces as string[]).map((dir) => [manifest(dir).name, dir]));

describe('the production dependency graph', () => {
  it('no development-only package among the dependencies a production install of the server brings', () => {
    const seen = new Set<string>();
    const visit = (dir: string) => {
      for (const dep of Object.keys(manifest(dir).dependencies ?? {})) {
        assert.ok(!DEV_ONLY_PACKAGES.includes(dep), `${dir}/package.json: ${dep} is development-only (a devDependency at most)`);
        const ws = WORKSPACES.get(dep);
        if (ws && !seen.has(ws)) {
          seen.add(ws);
          visit(ws);
        }
      }
    };
    visit('apps/server');
    assert.ok(seen.has('packages/protocol') && seen.has('packages/checkout-ui'), [...seen].join(' '));
  });

  it('the compiled gateway: production chunks neither contain nor import a development-only package', async () => {
    const result = await build({ ...bundleOptions(join(ROOT, 'apps/server/.graph-check')), write: false, sourcemap: false, logLevel: 'silent' });
    assert.deepEqual(productionGraphProblems(result.metafile), []);
    // The dev profile still has its chunk (with devchain and the SVM), so the split is real.
    const inputs = Object.values(result.metafile!.outputs).flatMap((o) => Object.keys(o.inputs));
    assert.ok(
      inputs.some((i) => i.includes('packages/devchain/')),
      'the dev profile bundles the local chain',
    );
  });

  it('the check names a production chunk that pulls in devchain, tsx, or an undeclared package', () => {
    const meta: Metafile = {
      inputs: {},
      outputs: {
        'cli.js': {
          entryPoint: 'apps/server/src/cli/main.ts',
          inputs: { 'apps/server/src/cli/main.ts': { bytesInOutput: 1 } },
          imports: [
            { path: 'serve.js', kind: 'dynamic-import' },
            { path: 'tsx/esm/api', kind: 'import-statement', external: true },
          ],
          exports: [],
          bytes: 1,
        },
        'serve.js': {
          inputs: { 'packages/devchain/src/index.ts': { bytesInOutput: 1 } },
          imports: [
            { path: 'left-pad', kind: 'import-statement', external: true },
            { path: 'esbuild', kind: 'dynamic-import', external: true },
          ],
          exports: [],
          bytes: 1,
        },
      },
    };
    assert.deepEqual(productionGraphProblems(meta, serverDependencies()).sort(), [
      'cli.js imports tsx, a development-only package',
      'serve.js contains packages/devchain/src/index.ts: packages/devchain/ is development-only',
      'serve.js imports left-pad, which apps/server/package.json does not declare',
    ]);
  });
});
