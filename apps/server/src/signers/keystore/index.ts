import { readFileSync } from 'node:fs';
import { RawKeySigner } from '../raw/index.ts';
import { decryptKeystore, KeystoreError } from './v3.ts';

export { decryptKeystore, encryptKeystore, KeystoreError } from './v3.ts';

/**
 * The executor key of an encrypted keystore file (Web3 Secret Storage v3), decrypted once: the
 * key then lives only inside the signer, as a raw key would, and the file and passphrase are not
 * kept. Errors name the file and the cause (malformed, wrong passphrase), never the passphrase.
 */
export function readKeystoreSigner(path: string, passphrase: string): RawKeySigner {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KeystoreError(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text: the ciphertext is not secret, but say less anyway.
    throw new KeystoreError(`${path} is not JSON`);
  }
  const { privateKey, address } = decryptKeystore(json, passphrase);
  return new RawKeySigner(privateKey, address, 'keystore');
}

/**
 * A passphrase file's passphrase: its text without the line ending after it (what `echo … > file`
 * and editors add), as geth's `--password` and Foundry's `--password-file` read theirs.
 */
export function passphraseFromFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KeystoreError(`cannot read the passphrase file ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return text.replace(/\r?\n$/, '');
}
