// API-key rotation from the portal: a new key and the old one's revocation in one transaction, so
// the merchant never holds a moment with neither (or, at the limit of two, three) active keys.
import type { PortalDeps } from './context.ts';
import { findApiKey, insertApiKey, lockMerchant, revokeApiKey } from '../merchants/repo.ts';
import { encryptSecret, generateApiCredentials } from '../merchants/secrets.ts';

export type RotateOutcome = { kind: 'rotated'; apiKey: string; apiSecret: string } | { kind: 'not_found' };

export async function rotateApiKey(deps: PortalDeps, merchantId: string, oldKey: string): Promise<RotateOutcome> {
  const creds = generateApiCredentials(deps.config.environment);
  const out = await deps.db.transaction(async (tx): Promise<RotateOutcome> => {
    if (!(await lockMerchant(tx, merchantId))) return { kind: 'not_found' };
    const k = await findApiKey(tx, oldKey);
    if (!k || k.merchant_id !== merchantId || k.revoked_at) return { kind: 'not_found' };
    await revokeApiKey(tx, merchantId, oldKey);
    await insertApiKey(tx, { apiKey: creds.apiKey, merchantId, ciphertext: encryptSecret(deps.config.masterKey, creds.apiSecret, creds.apiKey) });
    return { kind: 'rotated', ...creds };
  });
  // Drop the old key from the credential cache (the revocation is already committed).
  if (out.kind === 'rotated') await deps.merchants.revokeApiKey(merchantId, oldKey);
  return out;
}
