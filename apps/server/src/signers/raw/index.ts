import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { RedactedSigner } from '../port.ts';

/**
 * A secp256k1 private key held in memory (SETTLEMENT_KEY, or the key a keystore decrypted to).
 * Only the viem account made from it, inside this object, can reach the key.
 */
export class RawKeySigner extends RedactedSigner {
  readonly mode: 'raw' | 'keystore';
  readonly executorAddress: `0x${string}`;
  readonly #account: LocalAccount;
  readonly #key: `0x${string}`;

  /**
   * @param key 32-byte hex private key (0x-prefixed)
   * @param address its address when the caller already derived it (checked against the key)
   * @throws Error without the key in its message when the key is not a valid secp256k1 key
   */
  constructor(key: `0x${string}`, address?: `0x${string}`, mode: 'raw' | 'keystore' = 'raw') {
    super();
    let account: LocalAccount;
    try {
      account = privateKeyToAccount(key);
    } catch {
      // viem's message may quote its input: never rethrow it.
      throw new Error('not a valid secp256k1 private key');
    }
    if (address !== undefined && address.toLowerCase() !== account.address.toLowerCase()) throw new Error('the address does not belong to the key');
    this.#account = account;
    this.#key = key;
    this.executorAddress = account.address;
    this.mode = mode;
  }

  account(): LocalAccount {
    return this.#account;
  }

  /**
   * The key itself, for tests that hand it to a child process (settlement-kill). Production code
   * signs through account(); the port has no such method, so remote signing needs none.
   */
  privateKey(): `0x${string}` {
    return this.#key;
  }
}
