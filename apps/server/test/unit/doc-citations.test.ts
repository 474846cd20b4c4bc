// Code comments cite documents a clone of the repository has (docs/, a README), or say the fact in
// place: two specification files the code used to cite were never part of the repository.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const ABSENT = ['wire', 'interface'].map((n) => `${n}\\.md`).join('|');

it('no tracked file cites a document the repository does not have', () => {
  let hits = '';
  try {
    hits = execFileSync('git', ['grep', '-nE', ABSENT, '--', '.', `:!${fileURLToPath(import.meta.url).slice(ROOT.length)}`], { cwd: ROOT, encoding: 'utf8' });
  } catch (err) {
    if ((err as { status?: number }).status !== 1) throw err; // 1: no match
  }
  assert.equal(hits, '', `cite docs/ or say the fact in place:\n${hits}`);
});
