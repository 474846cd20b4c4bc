import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnTollgate } from '../helpers/process.ts';

const DOC = fileURLToPath(new URL('../../../../docs/operations.md', import.meta.url));

/** `tollgate <word> [<word>]` of every shell block of docs/operations.md, as written. */
function documentedCommands(md: string): string[] {
  const blocks = [...md.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  const out = new Set<string>();
  for (const line of blocks.flatMap((b) => b.split('\n'))) {
    const code = line.replace(/#.*$/, '');
    // The command position only (`createdb --owner tollgate tollgate` names a role, not a command).
    for (const m of code.matchAll(/(?:^\s*|npx\s+|[;&|]\s*)tollgate ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/g)) out.add(m[2] ? `${m[1]} ${m[2]}` : m[1]!);
  }
  return [...out].sort();
}

/**
 * An operator deploys with the documented commands only: every `tollgate …` command a shell block of
 * docs/operations.md shows must be one the CLI's usage lists (a command that has not landed yet
 * cannot be documented as if it had).
 */
describe('docs/operations.md commands', () => {
  it('every documented tollgate command is in the CLI', async () => {
    const p = spawnTollgate(['help'], {});
    const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
    assert.equal(code, 0, p.output());
    const usage = p.output();
    const commands = documentedCommands(readFileSync(DOC, 'utf8'));
    assert.ok(commands.includes('doctor') && commands.includes('serve'), commands.join(', '));
    const missing = commands.filter((c) => {
      const [cmd, sub] = c.split(' ');
      // `serve --role api`: the second word is an option's value or absent; a subcommand must be listed with its command.
      const lines = usage.split('\n').filter((l) => new RegExp(`^\\s+${cmd}\\b`).test(l));
      if (lines.length === 0) return true;
      return sub !== undefined && !lines.some((l) => new RegExp(`^\\s+${cmd}\\b.*\\b${sub}\\b`).test(l));
    });
    assert.deepEqual(missing, [], `documented but not in \`tollgate help\`:\n${usage}`);
  });

  it('the extraction finds what it must', () => {
    assert.deepEqual(documentedCommands('```sh\nnpx tollgate migrate status   # x\ntollgate backup --to f\n# tollgate nope\ncreatedb --owner tollgate tollgate\n```\n`tollgate inline`'), ['backup', 'migrate status']);
  });
});
