// Web3 Secret Storage v3 (signers/keystore/v3.ts): the test vectors published with the format
// (one per KDF, password "testpassword"), what geth, Foundry and ethers write, refusals that never
// quote the passphrase, and hostile KDF parameters refused before any work.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { decryptKeystore, encryptKeystore, KeystoreError, passphraseFromFile, readKeystoreSigner } from '../../src/signers/keystore/index.ts';

// The Web3 Secret Storage Definition's test vectors: both decrypt to this key.
const VECTOR_KEY = '0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d';
const PBKDF2_VECTOR = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '6087dab2f9fdbbfaddc31a909735c1e6' },
    ciphertext: '5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46',
    kdf: 'pbkdf2',
    kdfparams: { c: 262144, dklen: 32, prf: 'hmac-sha256', salt: 'ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd' },
    mac: '517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
const SCRYPT_VECTOR = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '83dbcc02d8ccb40e466191a123791e0e' },
    ciphertext: 'd172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c',
    kdf: 'scrypt',
    kdfparams: { dklen: 32, n: 262144, p: 8, r: 1, salt: 'ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19' },
    mac: '2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
// Small scrypt for the round trips (the format allows any power of 2; the CLI writes geth's standard).
const LIGHT = { n: 1024, r: 8, p: 1 };

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'tg-keystore-'));
  dirs.push(d);
  return d;
};

function refusal(fn: () => unknown, re: RegExp, secret?: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KeystoreError, String(e));
    assert.match(e.message, re);
    if (secret) assert.equal(e.message.includes(secret), false, `secret in: ${e.message}`);
    return true;
  });
}

describe('keystore v3', () => {
  it('decrypts the published PBKDF2 and scrypt test vectors', () => {
    for (const v of [PBKDF2_VECTOR, SCRYPT_VECTOR]) {
      const out = decryptKeystore(v, 'testpassword');
      assert.equal(out.privateKey, VECTOR_KEY);
      assert.equal(out.address, privateKeyToAccount(VECTOR_KEY).address);
    }
  });

  it('a wrong passphrase is a MAC mismatch, and the passphrase is not in the message', () => {
    refusal(() => decryptKeystore(PBKDF2_VECTOR, 'wrong-passphrase-123'), /wrong passphrase/, 'wrong-passphrase-123');
  });

  it("round trip: what it writes it reads, in geth's shape (lowercase address without 0x, UUID id, scrypt)", () => {
    const key = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';
    const file = encryptKeystore(key, 'correct horse', LIGHT) as any;
    assert.equal(file.version, 3);
    assert.equal(file.address, privateKeyToAccount(key).address.slice(2).toLowerCase());
    assert.match(file.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual([file.crypto.cipher, file.crypto.kdf, file.crypto.kdfparams.n, file.crypto.kdfparams.dklen], ['aes-128-ctr', 'scrypt', 1024, 32]);
    assert.equal(JSON.stringify(file).includes(key.slice(2)), false, 'the key in clear');
    assert.equal(decryptKeystore(JSON.parse(JSON.stringify(file)), 'correct horse').privateKey, key);
    // Two files of the same key differ (fresh salt and iv).
    assert.notEqual((encryptKeystore(key, 'correct horse', LIGHT) as any).crypto.ciphertext, file.crypto.ciphertext);
  });

  it('reads `Crypto` (early writers), and an ethers-style NFKC passphrase', () => {
    const key = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
    const { crypto, ...rest } = encryptKeystore(key, 'ﬁle', LIGHT) as any; // U+FB01, NFKC "fi"
    assert.equal(decryptKeystore({ ...rest, Crypto: crypto }, 'ﬁle').privateKey, key);
    const nfkc = encryptKeystore(key, 'file', LIGHT); // what ethers derives from "ﬁle"
    assert.equal(decryptKeystore(nfkc, 'ﬁle').privateKey, key);
  });

  it('refuses malformed files and hostile KDF parameters before deriving anything', () => {
    const f = () => JSON.parse(JSON.stringify(encryptKeystore('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', 'pw', LIGHT)));
    const cases: [(x: any) => unknown, RegExp][] = [
      [(x) => ({ ...x, version: 1 }), /version must be 3/],
      [(x) => ({ ...x, crypto: undefined }), /crypto missing/],
      [(x) => ((x.crypto.cipher = 'aes-128-cbc'), x), /aes-128-ctr/],
      [(x) => ((x.crypto.kdf = 'argon2'), x), /unsupported kdf argon2/],
      [(x) => ((x.crypto.kdfparams.n = 1000), x), /power of 2/],
      [(x) => ((x.crypto.kdfparams.n = 2 ** 24), x), /more than 1 GiB/],
      [(x) => ((x.crypto.kdfparams.dklen = 16), x), /at least 32/],
      [(x) => ((x.crypto.cipherparams.iv = 'zz'), x), /iv is not hex/],
      [(x) => ((x.crypto.ciphertext = 'abcd'), x), /ciphertext must be 32 bytes/],
      [(x) => ((x.address = '0000000000000000000000000000000000000001'), x), /address field does not match/],
    ];
    for (const [mutate, re] of cases) refusal(() => decryptKeystore(mutate(f()), 'pw'), re);
    const pb = JSON.parse(JSON.stringify(PBKDF2_VECTOR));
    pb.crypto.kdfparams.c = 100_000_000;
    refusal(() => decryptKeystore(pb, 'testpassword'), /too large/);
    pb.crypto.kdfparams = { ...PBKDF2_VECTOR.crypto.kdfparams, prf: 'hmac-sha1' };
    refusal(() => decryptKeystore(pb, 'testpassword'), /hmac-sha256/);
  });

  it('files: the passphrase file loses one trailing line ending only; an unreadable or non-JSON keystore is named, not quoted', () => {
    const d = tmp();
    for (const [text, want] of [
      ['pw\n', 'pw'],
      ['pw\r\n', 'pw'],
      ['pw', 'pw'],
      [' pw \n\n', ' pw \n'],
    ] as const) {
      writeFileSync(join(d, 'p'), text);
      assert.equal(passphraseFromFile(join(d, 'p')), want);
    }
    refusal(() => passphraseFromFile(join(d, 'missing')), /cannot read the passphrase file .*ENOENT/);
    writeFileSync(join(d, 'ks.json'), 'not json: secret-looking-text');
    refusal(() => readKeystoreSigner(join(d, 'ks.json'), 'pw'), /is not JSON/, 'secret-looking-text');
    writeFileSync(join(d, 'ks.json'), JSON.stringify(SCRYPT_VECTOR));
    const s = readKeystoreSigner(join(d, 'ks.json'), 'testpassword');
    assert.deepEqual([s.mode, s.executorAddress], ['keystore', privateKeyToAccount(VECTOR_KEY).address]);
    assert.equal(JSON.stringify(s).includes(VECTOR_KEY.slice(2)), false);
  });
});
