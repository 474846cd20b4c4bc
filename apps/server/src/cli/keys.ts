import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CliError } from './client.ts';

/** `tollgate keys new`: a new executor key, written only as an encrypted keystore (docs/operations.md "Keys"). */
export const KEYS_COMMANDS = ['keys'];

export const KEYS_USAGE = `  keys new --keystore FILE [--passphrase-file FILE]   new executor key in an encrypted keystore (Web3 Secret Storage v3); prints its address`;

export async function runKeysCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { keystore: { type: 'string' }, 'passphrase-file': { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (pos[1] !== 'new' || pos.length !== 2) throw new CliError(`unknown keys command ${pos.slice(1).join(' ')}\n\n${KEYS_USAGE}`);
  if (!o.keystore) throw new CliError(`missing --keystore FILE\n\n${KEYS_USAGE}`);
  // Loaded here only: viem and the keystore code are not needed by the other admin commands.
  const { passphraseFromFile, encryptKeystore, KeystoreError } = await import('../signers/keystore/index.ts');
  let passphrase: string;
  try {
    passphrase = o['passphrase-file'] ? passphraseFromFile(resolve(o['passphrase-file'])) : await promptTwice();
  } catch (err) {
    if (err instanceof KeystoreError) throw new CliError(err.message);
    throw err;
  }
  if (passphrase.length === 0) throw new CliError('the passphrase is empty');
  const { generatePrivateKey } = await import('viem/accounts');
  const file = encryptKeystore(generatePrivateKey(), passphrase);
  const path = resolve(o.keystore);
  try {
    // wx: never replace an existing keystore (its key may hold funds); 0600: only the owner reads it.
    writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(code === 'EEXIST' ? `${path} exists: choose another file (a keystore is never overwritten)` : `cannot write ${path} (${code ?? 'error'})`);
  }
  const address = `0x${file.address as string}`;
  const { getAddress } = await import('viem');
  if (o.json) console.log(JSON.stringify({ address: getAddress(address), keystore: path }));
  else console.log(getAddress(address));
}

/** The passphrase typed twice on the terminal, not echoed. */
async function promptTwice(): Promise<string> {
  if (!process.stdin.isTTY) throw new CliError('no terminal to ask for a passphrase: use --passphrase-file FILE');
  const first = await promptHidden('Passphrase: ');
  const second = await promptHidden('Repeat passphrase: ');
  if (first !== second) throw new CliError('the passphrases differ');
  return first;
}

function promptHidden(question: string): Promise<string> {
  return new Promise((done, fail) => {
    const input = process.stdin;
    process.stderr.write(question);
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.resume();
    let value = '';
    const finish = () => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return void (finish(), done(value));
        if (ch === '\u0003' || ch === '\u0004') return void (finish(), fail(new CliError('cancelled')));
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    input.on('data', onData);
  });
}
