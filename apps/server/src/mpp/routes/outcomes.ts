import { AppError } from '../../http/errors.ts';
import type { IssueOutcome } from '../challenges.ts';
import type { ReceiptClaims } from '../receipts.ts';
import type { VerifyOutcome } from '../verify.ts';

/** The `Payment-Receipt` header value: base64url JSON in the `Payment` scheme's receipt shape, carrying the JWS. */
export function paymentReceiptHeader(claims: ReceiptClaims, jws: string): string {
  const receipt = { method: 'evm', reference: claims.tx_hash, status: 'success', timestamp: new Date(claims.issued_at * 1000).toISOString(), challengeId: claims.challenge_id, receipt: jws };
  return Buffer.from(JSON.stringify(receipt)).toString('base64url');
}

/** The issued challenge of an issue outcome; throws the refusal (unknown merchant, unpriced route, bad request_canonical). */
export function issuedOrThrow(out: IssueOutcome, merchantId: string): Extract<IssueOutcome, { kind: 'issued' }> {
  switch (out.kind) {
    case 'merchant_not_found':
      throw new AppError('merchant_not_found', `merchant ${merchantId} not found`, 'merchant_id');
    case 'route_not_priced':
      throw new AppError('route_not_priced', 'the merchant has no price for this route', 'route_canonical');
    case 'invalid_request_canonical':
      throw new AppError('invalid_request', 'request_canonical must equal route_canonical or extend it with :suffix segments', 'request_canonical');
    case 'issued':
      return out;
  }
}

/** Maps a refused verification to its error (every 401 of the machine-payment catalog, 409, 400, 404, 503). */
export function verifyError(out: Exclude<VerifyOutcome, { kind: 'paid' } | { kind: 'pending' }>): AppError {
  switch (out.kind) {
    case 'invalid_mac':
      return new AppError('invalid_mac', 'the challenge id or MAC does not verify', 'mac');
    case 'challenge_not_found':
      return new AppError('challenge_not_found', 'no challenge with this id', 'challenge_id');
    case 'payer_mismatch':
      return new AppError('payer_mismatch', 'payer_addr is not the payer the challenge was issued to', 'payer_addr');
    case 'payer_proof_required':
      return new AppError('payer_proof_required', 'the challenge names no payer: the credential must prove it controls the paying address (an authorization credential, or a hash credential with payload.signature; see docs/machine-payments.md)', 'payer_addr');
    case 'payer_proof_invalid':
      return new AppError('payer_proof_invalid', "payload.signature is not the source address's EIP-712 signature over this challenge's proof (see docs/machine-payments.md)", 'signature');
    case 'challenge_expired':
      return new AppError('challenge_expired', 'the challenge expired before the payment was mined; request a new challenge', 'challenge_id');
    case 'challenge_already_consumed':
      return new AppError('challenge_already_consumed', 'the challenge was already paid by another transaction', 'challenge_id');
    case 'tx_already_claimed':
      return new AppError('tx_already_claimed', 'this transfer is already claimed: it paid another challenge, an order or a settlement, or it carries the exact terms of a live order (docs/attribution.md)', 'tx_hash');
    case 'transfer_not_found':
      return new AppError('transfer_not_found', out.reason, 'tx_hash');
    case 'request_mismatch':
      return new AppError('invalid_request', 'the credential answers a challenge for another merchant, route or request');
    case 'chain_unavailable':
      return new AppError('service_unavailable', 'the chain could not be read; retry later');
  }
}
