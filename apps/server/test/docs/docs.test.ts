// The project's documentation stays inside the repository and in step with the code:
//  - every relative link in every Markdown file of the repository, and every file a description in
//    /openapi.json points at, resolves to a file inside the repository (nothing in ../shared, no
//    reference to documents that are not shipped);
//  - docs/errors.md is what `npm run docs:errors` renders from the catalog today;
//  - the status-record field table of docs/orders.md matches the OpenAPI schema of
//    GET /api/v1/orders/{order_id} (names, types, required or optional);
//  - every passage that lists the webhook events lists exactly WEBHOOK_EVENTS;
//  - the export column table of docs/portal.md names EXPORT_COLUMNS, in the files' order.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { WEBHOOK_EVENTS } from '@tollgate/protocol';
import { renderErrorsDoc } from '../../../../scripts/docs-errors.ts';
import { proofHash } from '../../src/orders/proof.ts';
import { EXPORT_COLUMNS } from '../../src/portal/data/csv.ts';
import { codeBlocks } from '../readme/readme-fixtures.ts';
import { fakeChain, startTestServer, type TestServer } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'test-artifacts', '.tollgate']);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP_DIRS.has(name) || name.startsWith('dist.')) return [];
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return markdownFiles(p);
    return name.endsWith('.md') ? [p] : [];
  });
}

/** Link targets of a Markdown text: inline links and images, and reference definitions; code is skipped. */
function links(markdown: string): string[] {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const refs = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!);
  return [...inline, ...refs];
}

/** Why a relative link from `file` does not resolve to a file inside the repository, or undefined. */
function problem(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return undefined; // absolute URL, mailto:, in-page anchor
  const path = decodeURIComponent(target.split('#')[0]!.split('?')[0]!);
  const abs = path.startsWith('/') ? join(ROOT, path) : resolve(dirname(file), path);
  const rel = relative(ROOT, abs);
  if (rel.startsWith('..') || resolve(ROOT, rel) !== abs) return `${target} leaves the repository`;
  if (!existsSync(abs)) return `${target} does not exist`;
  return undefined;
}

describe('documentation', () => {
  it('every relative link of every Markdown file resolves to a file inside the repository', () => {
    const files = markdownFiles(ROOT);
    assert.ok(files.length >= 10, files.join('\n'));
    const bad: string[] = [];
    let checked = 0;
    for (const f of files) {
      for (const target of links(readFileSync(f, 'utf8'))) {
        checked++;
        const p = problem(f, target);
        if (p) bad.push(`${relative(ROOT, f)}: ${p}`);
      }
    }
    assert.deepEqual(bad, []);
    assert.ok(checked > 30, `only ${checked} links found: is the link parser broken?`);
    // The documents that are not part of the repository are not cited as if they were.
    const cites = files.filter((f) => /\.\.\/shared\/|spec\/(interface|wire)\.md|\b(interface|wire|DESIGN|STYLE)\.md\b/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(
      cites.map((f) => relative(ROOT, f)),
      [],
    );
  });

  it('the link checker itself refuses what it must', () => {
    const readme = join(ROOT, 'README.md');
    assert.equal(problem(readme, 'docs/orders.md#status-record'), undefined);
    assert.match(problem(readme, '../outside/spec.md') ?? '', /leaves the repository/);
    assert.match(problem(readme, 'docs/nope.md') ?? '', /does not exist/);
    assert.deepEqual(links('see [a](docs/a.md) and ![i](img.png "t") and `[x](no.md)`\n```\n[y](no2.md)\n```\n[r]: ref.md'), ['docs/a.md', 'img.png', 'ref.md']);
  });

  it("the proof-hash snippet of docs/orders.md recomputes the server's `signature` (plain Node)", () => {
    const payload = {
      order_id: 'ord_4sEswquwAUkxYBcoQ1uwcH',
      tx_hash: `0x${'ab'.repeat(32)}`,
      log_index: 3,
      from_addr: '0x8ba1f109551bd432803012645ac136ddd64dba72',
      to_addr: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720',
      amount_wei: '2500000',
      from_chain_id: 31337,
      token_contract: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      block_number: 42,
      status: 'INVOICED',
    };
    const proof = { payload, signature: proofHash(payload) };
    const snippet = codeBlocks(readFileSync(join(ROOT, 'docs/orders.md'), 'utf8'), 'Payment record').find((b) => b.lang === 'js')!.code;
    const code = `const proof = ${JSON.stringify(proof)};\n${snippet}\nconsole.log(JSON.stringify(expected === proof.signature));\n`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'true');
  });

  it('docs/errors.md is current (npm run docs:errors)', () => {
    assert.equal(readFileSync(join(ROOT, 'docs/errors.md'), 'utf8'), renderErrorsDoc(), 'docs/errors.md is out of date: run `npm run docs:errors`');
  });
});

describe('documentation against /openapi.json', () => {
  let server: TestServer;
  let doc: any;
  before(async () => {
    server = await startTestServer({ backend: 'pglite', chains: [fakeChain()] });
    const r = await server.request('GET', '/openapi.json');
    assert.equal(r.status, 200, r.text);
    doc = r.body;
  });
  after(() => server.close());

  it('every file a description or summary names (a path ending in .md, .json or .ts) is inside the repository', () => {
    const texts: string[] = [];
    const visit = (v: unknown, key?: string) => {
      if (typeof v === 'string' && (key === 'description' || key === 'summary')) texts.push(v);
      else if (Array.isArray(v)) v.forEach((x) => visit(x));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) visit(x, k);
    };
    visit(doc);
    assert.ok(texts.length > 50, `${texts.length} descriptions`);
    const refs = texts.flatMap((t) => [...t.matchAll(/(?:\]\(([^)\s]+)\)|((?:\.{1,2}\/)?[\w./-]+\.(?:md|json|ts))\b)/g)].map((m) => m[1] ?? m[2]!));
    // A route of the document itself (`/openapi.json`, `/.well-known/jwks.json`) is not a file.
    const bad = refs.filter((r) => !(r in doc.paths) && r !== '/openapi.json' && problem(join(ROOT, 'README.md'), r) !== undefined);
    assert.deepEqual(bad, []);
    assert.ok(refs.includes('docs/orders.md') && refs.includes('docs/authentication.md'), refs.join(', '));
    assert.ok(!texts.some((t) => /\b(interface|wire)\.md\b|\.\.\/shared/.test(t)));
  });

  it('the status-record table of docs/orders.md matches the OpenAPI schema of GET /api/v1/orders/{order_id}', () => {
    const op = doc.paths['/api/v1/orders/{order_id}'].get;
    const schema = op.responses['200'].content['application/json'].schema;
    const required = new Set<string>(schema.required ?? []);
    const fromSchema = Object.entries(schema.properties as Record<string, { type: string }>)
      .map(([name, p]) => `${name} ${p.type} ${required.has(name) ? 'yes' : 'no'}`)
      .sort();

    const md = readFileSync(join(ROOT, 'docs/orders.md'), 'utf8');
    const section = md.slice(md.indexOf('## Status record'), md.indexOf('\n## ', md.indexOf('## Status record') + 1));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\w+) \| (yes|no) \|/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`).sort();
    assert.deepEqual(rows, fromSchema);
  });

  it('every passage that lists the webhook events names exactly WEBHOOK_EVENTS', () => {
    // Each passage from its start marker to its end marker; an event is a backticked dotted name.
    const passages: [file: string, from: string, to: string][] = [
      ['README.md', '\nEvents (', ' are written'],
      ['packages/protocol/README.md', '\nEvents: ', '(`WEBHOOK_EVENTS`'],
      ['docs/webhooks.md', '## Events', '\n\n'],
    ];
    for (const [file, from, to] of passages) {
      const md = readFileSync(join(ROOT, file), 'utf8');
      const start = md.indexOf(from);
      assert.ok(start >= 0, `${file}: no passage starting ${JSON.stringify(from)}`);
      const text = md.slice(start, md.indexOf(to, start + from.length + 2));
      const named = new Set([...text.matchAll(/`([a-z0-9_]+(?:\.[a-z0-9_]+)+)`/g)].map((m) => m[1]!));
      assert.deepEqual([...named].sort(), [...WEBHOOK_EVENTS].sort(), file);
    }
  });
});

describe('docs/portal.md Exports', () => {
  it("the column table names every column of both CSV files, in the files' order", () => {
    const text = readFileSync(join(ROOT, 'docs/portal.md'), 'utf8');
    const section = text.slice(text.indexOf('## Exports'));
    const table = section.slice(section.indexOf('| Column |'), section.indexOf('\n\n', section.indexOf('| Column |')));
    const named = table
      .split('\n')
      .slice(2)
      .flatMap((row) => [...row.split('|')[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
    assert.deepEqual(named, [...EXPORT_COLUMNS]);
  });
});
