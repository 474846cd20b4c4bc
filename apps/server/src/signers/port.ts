import type { LocalAccount } from 'viem';

/**
 * How the executor key is held (docs/operations.md "Keys"): `raw` (SETTLEMENT_KEY in the
 * environment), `keystore` (an encrypted Web3 Secret Storage file, decrypted once at start) or
 * `remote` (a JSON-RPC signer such as Web3Signer or Clef holds the key; Tollgate never sees it).
 */
export type SignerMode = 'raw' | 'keystore' | 'remote';

/**
 * The EVM signer port: what every user of the executor key needs (the settlement executor signs
 * and records raw transactions with nonces it allocates itself; x402 and DELEGATE take their
 * executor from settlement/executors.ts). One implementation per folder: raw/, keystore/, remote/.
 *
 * `account()` is a viem account: its `signTransaction` returns the serialized signed transaction
 * for exactly the fields given (nonce included: the executor records the bytes before it sends
 * them, so a signer that chose its own nonce would break that record), `signTypedData` an EIP-712
 * signature. The same object is returned on every call.
 */
export interface EvmSigner {
  readonly mode: SignerMode;
  /** Checksummed address of the key: public (GET /admin/v1/chains shows it). */
  readonly executorAddress: `0x${string}`;
  account(): LocalAccount;
  /**
   * A start-up check that the key is usable (the remote signer answers and holds the address);
   * resolves with nothing, or rejects with a message that names no key material.
   */
  check(): Promise<void>;
}

/**
 * Every implementation prints as its mode and address only: JSON (a logger serializing the
 * config), `util.inspect` (console.log, an error's cause) and string conversion never carry a key,
 * a passphrase or a credential of the remote signer's URL.
 */
export abstract class RedactedSigner implements EvmSigner {
  abstract readonly mode: SignerMode;
  abstract readonly executorAddress: `0x${string}`;
  abstract account(): LocalAccount;
  async check(): Promise<void> {}
  /** Public facts beside the address (e.g. the remote signer's origin). */
  protected describe(): Record<string, string> {
    return {};
  }
  toJSON() {
    return { mode: this.mode, executorAddress: this.executorAddress, ...this.describe(), key: '[redacted]' };
  }
  toString() {
    return `EvmSigner(${this.mode}, ${this.executorAddress}, key [redacted])`;
  }
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }
}
