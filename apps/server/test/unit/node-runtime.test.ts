// The Node versions Tollgate declares and runs on (issue 27): `engines` says ≥ 22.19, npm scripts run
// on the pinned `node` devDependency (Node 24: its .bin/node comes first on their PATH), CI's smoke
// run uses the Node 22 of .ci/node22, and no installed package needs a newer Node than declared.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import semver from 'semver';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const json = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));
const root = json('package.json');
const lock = json('package-lock.json');
const ci22 = json('.ci/node22/package.json');
const declared = root.engines.node as string;
const minimum = semver.minVersion(declared)!.version;
const node24 = root.devDependencies.node as string;
const node22 = ci22.devDependencies.node as string;

describe('Node versions', () => {
  it('runs on the Node CI asked for (TOLLGATE_EXPECT_NODE: 24 for the full run, 22 for the smoke run)', (t) => {
    const expected = process.env.TOLLGATE_EXPECT_NODE;
    if (!expected) return t.skip('TOLLGATE_EXPECT_NODE not set (set by .ci/run)');
    assert.equal(String(semver.major(process.version)), expected, `this suite runs on ${process.version}`);
  });

  it('declares Node 22 and 24, pins both exactly, and @types/node follows the Node npm scripts run on', () => {
    assert.equal(semver.valid(node24), node24, 'the node devDependency is an exact version');
    assert.equal(semver.valid(node22), node22, '.ci/node22 pins an exact version');
    assert.equal(semver.major(node24), 24);
    assert.equal(semver.major(node22), 22);
    for (const v of [node22, node24]) assert.ok(semver.satisfies(v, declared), `${v} satisfies engines ${declared}`);
    assert.ok(!semver.satisfies('20.20.2', declared), 'Node 20 (end of life) is not declared');
    assert.equal(semver.major(root.devDependencies['@types/node']), semver.major(node24));
    assert.equal(lock.packages[''].devDependencies.node, node24, 'package-lock.json has the same pin');
  });

  it('no installed package requires a newer Node than the declared minimum', () => {
    const tooNew: string[] = [];
    for (const [path, pkg] of Object.entries(lock.packages as Record<string, { engines?: { node?: string } | string[] }>)) {
      const range = !Array.isArray(pkg.engines) ? pkg.engines?.node : undefined;
      if (!path || !range || semver.validRange(range) === null) continue;
      // Some packages list Node lines they skip (`^20.9 || >=21.1`); what matters is that every Node
      // Tollgate supports satisfies them: the declared minimum and the two pinned versions.
      for (const v of [minimum, node22, node24]) if (!semver.satisfies(v, range)) tooNew.push(`${path} (${range}) refuses ${v}`);
    }
    assert.deepEqual(tooNew, []);
  });
});
