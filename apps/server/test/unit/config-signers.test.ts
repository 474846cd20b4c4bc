// The settlement signer and the Solana delegate from the environment (config/load.ts,
// docs/operations.md "Keys"): exactly one executor signer mode, each mode's required variables,
// the Solana CLI keypair file, and no key, passphrase or URL credential in an error or a dump.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { after, describe, it } from 'node:test';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { solanaDelegateKeyFromSeed } from '../../src/config/solana.ts';
import { encryptKeystore } from '../../src/signers/keystore/index.ts';

const MASTER_KEY = 'ab'.repeat(32);
// anvil's public test account 7: never a real key
const KEY = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';
const EXECUTOR = privateKeyToAccount(KEY).address;
const PASS = 'Heron-glass-passphrase-9';
const SETTLEMENT = '0x8464135c8F25Da09e49BC8782676a84730C318bC';

const cwd = mkdtempSync(join(tmpdir(), 'tg-config-signers-'));
after(() => rmSync(cwd, { recursive: true, force: true }));
writeFileSync(
  join(cwd, 'tollgate.json'),
  JSON.stringify({
    environment: 'production',
    chains: [{ chain_id: 31337, rpc_url: 'http://127.0.0.1:8545', confirmations: 1, finality_confirmations: 2, settlement_contract: SETTLEMENT, tokens: [{ symbol: 'USDC', address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 }] }],
  }),
);
writeFileSync(join(cwd, 'executor.json'), JSON.stringify(encryptKeystore(KEY, PASS, { n: 1024, r: 8, p: 1 })));
writeFileSync(join(cwd, 'pass.txt'), `${PASS}\n`);

const load = (env: Record<string, string>) => loadConfig({ TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY, ...env }, cwd);

function configError(env: Record<string, string>, key: string, re: RegExp, secrets: string[] = []): void {
  try {
    load(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.key, key, err.message);
    assert.match(err.message, re);
    for (const s of secrets) assert.equal(err.message.toLowerCase().includes(s.toLowerCase()), false, `secret in: ${err.message}`);
    return;
  }
  assert.fail('expected a ConfigError');
}

function assertNoSecretInDumps(value: unknown, secrets: string[]): void {
  const dumps = [JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)), inspect(value, { depth: 10, showHidden: true }), String((value as { settlement?: unknown }).settlement)];
  for (const d of dumps) for (const s of secrets) assert.equal(d.toLowerCase().includes(s.toLowerCase()), false, `secret in ${d.slice(0, 160)}`);
}

describe('config: settlement signer modes', () => {
  it('keystore with a passphrase file (one trailing newline dropped) or the passphrase variable', () => {
    for (const env of [{ SETTLEMENT_KEYSTORE_PASSPHRASE_FILE: 'pass.txt' }, { SETTLEMENT_KEYSTORE_PASSPHRASE: PASS }] as Record<string, string>[]) {
      const c = load({ SETTLEMENT_KEYSTORE: 'executor.json', ...env });
      assert.deepEqual([c.settlement?.mode, c.settlement?.executorAddress], ['keystore', EXECUTOR]);
      assertNoSecretInDumps(c, [KEY.slice(2), PASS]);
    }
  });

  it('remote: URL and address; credentials of the URL are in no dump', () => {
    const c = load({ SETTLEMENT_SIGNER_URL: 'https://tollgate:url-Secret-77@signer.internal:9000/', SETTLEMENT_SIGNER_ADDRESS: EXECUTOR.toLowerCase() });
    assert.deepEqual([c.settlement?.mode, c.settlement?.executorAddress], ['remote', EXECUTOR]);
    assert.deepEqual(JSON.parse(JSON.stringify(c.settlement)), { mode: 'remote', executorAddress: EXECUTOR, signer: 'https://signer.internal:9000', key: '[redacted]' });
    assertNoSecretInDumps(c, ['url-Secret-77', 'tollgate:']);
  });

  it('refuses two modes, a mode without its companion, and companions without their mode', () => {
    configError({ SETTLEMENT_KEY: KEY, SETTLEMENT_KEYSTORE: 'executor.json' }, 'SETTLEMENT_KEYSTORE', /set one settlement signer, not SETTLEMENT_KEY and SETTLEMENT_KEYSTORE/, [KEY.slice(2)]);
    configError({ SETTLEMENT_KEYSTORE: 'executor.json', SETTLEMENT_SIGNER_URL: 'http://127.0.0.1:1', SETTLEMENT_SIGNER_ADDRESS: EXECUTOR }, 'SETTLEMENT_SIGNER_URL', /set one settlement signer/);
    configError({ SETTLEMENT_KEYSTORE: 'executor.json' }, 'SETTLEMENT_KEYSTORE_PASSPHRASE_FILE', /required by SETTLEMENT_KEYSTORE/);
    configError({ SETTLEMENT_KEYSTORE: 'executor.json', SETTLEMENT_KEYSTORE_PASSPHRASE: PASS, SETTLEMENT_KEYSTORE_PASSPHRASE_FILE: 'pass.txt' }, 'SETTLEMENT_KEYSTORE_PASSPHRASE', /not both/, [PASS]);
    configError({ SETTLEMENT_KEY: KEY, SETTLEMENT_KEYSTORE_PASSPHRASE: PASS }, 'SETTLEMENT_KEYSTORE_PASSPHRASE', /only used with SETTLEMENT_KEYSTORE/, [PASS, KEY.slice(2)]);
    configError({ SETTLEMENT_SIGNER_URL: 'http://127.0.0.1:1' }, 'SETTLEMENT_SIGNER_ADDRESS', /required by SETTLEMENT_SIGNER_URL/);
    configError({ SETTLEMENT_KEY: KEY, SETTLEMENT_SIGNER_ADDRESS: EXECUTOR }, 'SETTLEMENT_SIGNER_ADDRESS', /only used with SETTLEMENT_SIGNER_URL/);
    // Without any signer, a settlement contract names the three ways.
    configError({}, 'SETTLEMENT_KEY', /SETTLEMENT_KEY, SETTLEMENT_KEYSTORE or SETTLEMENT_SIGNER_URL.*chains\.0\.settlement_contract/);
  });

  it('a wrong passphrase, a missing file and a file that is not a keystore: the cause, never the passphrase or a byte of the file', () => {
    configError({ SETTLEMENT_KEYSTORE: 'executor.json', SETTLEMENT_KEYSTORE_PASSPHRASE: 'Wrong-passphrase-3' }, 'SETTLEMENT_KEYSTORE', /wrong passphrase \(MAC mismatch\)/, ['Wrong-passphrase-3', PASS]);
    configError({ SETTLEMENT_KEYSTORE: 'nowhere.json', SETTLEMENT_KEYSTORE_PASSPHRASE: PASS }, 'SETTLEMENT_KEYSTORE', /cannot read .*nowhere\.json \(ENOENT\)/, [PASS]);
    configError({ SETTLEMENT_KEYSTORE: 'executor.json', SETTLEMENT_KEYSTORE_PASSPHRASE_FILE: 'nopass.txt' }, 'SETTLEMENT_KEYSTORE', /cannot read the passphrase file/);
    writeFileSync(join(cwd, 'notks.json'), JSON.stringify({ version: 3, crypto: { cipher: 'aes-128-ctr' }, secretish: 'x'.repeat(8) }));
    configError({ SETTLEMENT_KEYSTORE: 'notks.json', SETTLEMENT_KEYSTORE_PASSPHRASE: PASS }, 'SETTLEMENT_KEYSTORE', /cipherparams\.iv is not hex/, [PASS, 'xxxxxxxx']);
  });

  it('a remote signer URL that is not http(s) is refused by the schema', () => {
    configError({ SETTLEMENT_SIGNER_URL: 'ftp://signer', SETTLEMENT_SIGNER_ADDRESS: EXECUTOR }, 'SETTLEMENT_SIGNER_URL', /Expected string to match/);
  });
});

describe('config: Solana delegate from a Solana CLI keypair file', () => {
  const seed = new Uint8Array(32).map((_, i) => i + 1);
  const key = solanaDelegateKeyFromSeed(seed);
  const pub = [...getBase58Encoder().encode(key.address)];

  it('reads the 64-byte JSON array (seed ‖ public key) as solana-keygen writes it', () => {
    writeFileSync(join(cwd, 'delegate.json'), JSON.stringify([...seed, ...pub]));
    const c = load({ SETTLEMENT_KEY: KEY, SOLANA_DELEGATE_KEYPAIR: 'delegate.json' });
    assert.equal(c.solanaDelegate?.address, key.address);
    assert.equal(getBase58Decoder().decode(Uint8Array.from(pub)), key.address);
    assert.deepEqual([...c.solanaDelegate!.privateKey()], [...seed]);
    assertNoSecretInDumps(c.solanaDelegate, [Buffer.from(seed).toString('hex'), seed.join(',')]);
  });

  it('refuses a short array, a mismatched public half, a missing file and both variables, quoting no byte', () => {
    const seedText = seed.join(',');
    writeFileSync(join(cwd, 'short.json'), JSON.stringify([...seed, ...pub.slice(1)]));
    configError({ SETTLEMENT_KEY: KEY, SOLANA_DELEGATE_KEYPAIR: 'short.json' }, 'SOLANA_DELEGATE_KEYPAIR', /JSON array of 64 bytes/, [seedText]);
    writeFileSync(join(cwd, 'other.json'), JSON.stringify([...seed, ...new Array(32).fill(9)]));
    configError({ SETTLEMENT_KEY: KEY, SOLANA_DELEGATE_KEYPAIR: 'other.json' }, 'SOLANA_DELEGATE_KEYPAIR', /public half .* does not match/, [seedText]);
    configError({ SETTLEMENT_KEY: KEY, SOLANA_DELEGATE_KEYPAIR: 'missing.json' }, 'SOLANA_DELEGATE_KEYPAIR', /cannot read .*ENOENT/);
    writeFileSync(join(cwd, 'delegate.json'), JSON.stringify([...seed, ...pub]));
    configError({ SETTLEMENT_KEY: KEY, SOLANA_DELEGATE_KEYPAIR: 'delegate.json', SOLANA_DELEGATE_KEY: key.address + key.address.slice(0, 10) }, 'SOLANA_DELEGATE_KEYPAIR', /not both/);
  });
});
