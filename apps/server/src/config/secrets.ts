// The settings that hold credentials (card processor, SMTP, the Solana delegate key), each behind
// a wrapper whose JSON, string and inspect forms are redacted, as the signers' are (signers/port.ts):
// a logged or dumped Config never carries a secret. Only an explicit accessor reveals one.

/** Stripe credentials behind a wrapper that prints as [redacted] (like the signers, signers/port.ts). */
export class StripeSettings {
  readonly #secretKey: string;
  readonly #webhookSecret: string;
  readonly api: { host: string; port: number; protocol: 'http' | 'https' } | undefined;
  readonly webhookToleranceSeconds: number;
  constructor(secretKey: string, webhookSecret: string, api: { host: string; port: number; protocol: 'http' | 'https' } | undefined, webhookToleranceSeconds: number) {
    this.api = api;
    this.webhookToleranceSeconds = webhookToleranceSeconds;
    this.#secretKey = secretKey;
    this.#webhookSecret = webhookSecret;
  }
  secretKey(): string {
    return this.#secretKey;
  }
  webhookSecret(): string {
    return this.#webhookSecret;
  }
  toJSON() {
    return { api: this.api, secretKey: '[redacted]', webhookSecret: '[redacted]' };
  }
  toString() {
    return 'StripeSettings([redacted])';
  }
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }
}

/** SMTP_URL + SMTP_FROM, kept like the signers (signers/port.ts): the URL's credentials never print. */
export class SmtpSettings {
  readonly #url: string;
  readonly from: string;
  constructor(url: string, from: string) {
    this.from = from;
    this.#url = url;
  }
  url(): string {
    return this.#url;
  }
  toJSON() {
    return { from: this.from, url: '[redacted]' };
  }
  toString() {
    return `SmtpSettings(from ${this.from}, url [redacted])`;
  }
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }
}

/**
 * The Solana delegate key of SOL_APPROVE_XFER, kept like the EVM signers: no JSON, string or
 * inspect form carries the private bytes; only `privateKey()` reveals them, for signing.
 */
export class SolanaDelegateKey {
  readonly #key: Uint8Array;
  readonly address: string;
  constructor(
    /** the 32-byte ed25519 private key */
    key: Uint8Array,
    /** its public key (base58): what payers approve; public */
    address: string,
  ) {
    this.address = address;
    this.#key = Uint8Array.from(key);
  }
  privateKey(): Uint8Array {
    return Uint8Array.from(this.#key);
  }
  toJSON() {
    return { address: this.address, key: '[redacted]' };
  }
  toString() {
    return `SolanaDelegateKey(${this.address}, key [redacted])`;
  }
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }
}
