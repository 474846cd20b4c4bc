import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets at rest (API secrets, webhook secrets) under MASTER_KEY. Format
 * `v1:<iv>:<tag>:<ciphertext>` (base64 parts): the version prefix leaves room for key rotation.
 * `aad` binds a ciphertext to its row (e.g. the api key), so a ciphertext copied onto another row
 * does not decrypt.
 */
export function encryptSecret(masterKey: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
}

export function decryptSecret(masterKey: Buffer, stored: string, aad: string): string {
  const [v, iv, tag, ct] = stored.split(':');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(iv, 'base64'));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64')), decipher.final()]).toString('utf8');
}

/** A new API key (public identifier) and secret: 24 random bytes each. */
export function generateApiCredentials(environment: 'test' | 'production'): { apiKey: string; apiSecret: string } {
  const env = environment === 'production' ? 'live' : 'test';
  return {
    apiKey: `tg_${env}_${randomBytes(18).toString('base64url')}`,
    apiSecret: `tgsk_${randomBytes(24).toString('base64url')}`,
  };
}
