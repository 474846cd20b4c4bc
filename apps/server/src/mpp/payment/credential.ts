/**
 * `Authorization: Payment <credential>` (pure): the credential is base64url (no padding) JSON
 * `{ challenge: { id, realm, method, intent, request, expires? }, payload: { type, … }, source? }`,
 * as the `mppx` client serializes it. Tollgate accepts payload type `hash` (`{ type: "hash", hash,
 * signature? }`: the payer's transaction, and on an open challenge the payer's proof, payment/proof.ts)
 * and reads the payer from `source` (`did:pkh:eip155:<chain>:<address>`),
 * and payload type `authorization` (mppx's EVM charge method: an EIP-3009
 * `transferWithAuthorization` signed by the payer, `{ type, from, to, value, validAfter,
 * validBefore, nonce, signature }`, amounts as decimal strings, nonce = keccak256(id ‖ realm)),
 * which the gateway settles.
 * The echoed challenge is only a pointer: everything that matters is re-read from the stored
 * challenge its id names, never trusted from the credential.
 */
export interface AuthorizationPayload {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
  signature: string;
}

export type ParsedCredential =
  | { kind: 'hash'; challengeId: string; txHash: string; payer: string | undefined; sourceChainId: number | undefined; signature: string | undefined }
  | { kind: 'authorization'; challengeId: string; authorization: AuthorizationPayload; payer: string; sourceChainId: number | undefined }
  | { kind: 'unsupported'; type: string }
  | { kind: 'malformed'; reason: string };

const MAX_CREDENTIAL_LENGTH = 16 * 1024;

/** @example parseCredential('Payment eyJjaGFsbGVuZ2Ui…') // => { kind: 'hash', challengeId: 'ch_…', … } */
export function parseCredential(header: string): ParsedCredential {
  // Several schemes may share one Authorization header (RFC 9110 lists); take the Payment one.
  const part = header
    .split(',')
    .map((s) => s.trim())
    .find((s) => /^Payment\s+/i.test(s));
  if (!part) return { kind: 'malformed', reason: 'no Payment credential in Authorization' };
  const token = part.replace(/^Payment\s+/i, '');
  if (token.length > MAX_CREDENTIAL_LENGTH || !/^[A-Za-z0-9_-]+={0,2}$/.test(token)) return { kind: 'malformed', reason: 'the credential is not base64url' };
  let v: any;
  try {
    v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return { kind: 'malformed', reason: 'the credential is not base64url JSON' };
  }
  const id = v?.challenge?.id;
  const payload = v?.payload;
  if (typeof id !== 'string' || typeof payload !== 'object' || payload === null) return { kind: 'malformed', reason: 'challenge.id and payload are required' };
  const m = typeof v.source === 'string' ? /^did:pkh:eip155:(\d{1,12}):(0x[0-9a-fA-F]{40})$/.exec(v.source) : null;
  const sourceChainId = m ? Number(m[1]) : undefined;
  if (payload.type === 'authorization') return parseAuthorization(id, payload, m?.[2]?.toLowerCase(), sourceChainId);
  if (payload.type !== 'hash') return { kind: 'unsupported', type: String(payload.type) };
  if (typeof payload.hash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(payload.hash)) return { kind: 'malformed', reason: 'payload.hash must be a 32-byte hex transaction hash' };
  const sig = payload.signature;
  if (sig !== undefined && (typeof sig !== 'string' || !SIGNATURE.test(sig))) return { kind: 'malformed', reason: 'payload.signature must be a 65-byte ECDSA signature' };
  return { kind: 'hash', challengeId: id, txHash: payload.hash.toLowerCase(), payer: m?.[2]?.toLowerCase(), sourceChainId, signature: sig?.toLowerCase() };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^(0|[1-9][0-9]{0,77})$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/** The `authorization` payload's fields, shape-checked (signature and terms are checked by the settle path). */
function parseAuthorization(challengeId: string, p: Record<string, unknown>, source: string | undefined, sourceChainId: number | undefined): ParsedCredential {
  const s = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '');
  if (!ADDRESS.test(s('from')) || !ADDRESS.test(s('to'))) return { kind: 'malformed', reason: 'payload.from and payload.to must be addresses' };
  for (const k of ['value', 'validAfter', 'validBefore']) if (!UINT.test(s(k))) return { kind: 'malformed', reason: `payload.${k} must be a decimal integer string` };
  if (!/^0x[0-9a-fA-F]{64}$/.test(s('nonce'))) return { kind: 'malformed', reason: 'payload.nonce must be 32 bytes hex' };
  if (!SIGNATURE.test(s('signature'))) return { kind: 'malformed', reason: 'payload.signature must be a 65-byte ECDSA signature' };
  const from = s('from').toLowerCase();
  // mppx sets source to the signer; a credential naming another payer there is inconsistent.
  if (source !== undefined && source !== from) return { kind: 'malformed', reason: 'source names another address than payload.from' };
  return {
    kind: 'authorization',
    challengeId,
    payer: from,
    sourceChainId,
    authorization: { from, to: s('to').toLowerCase(), value: s('value'), validAfter: s('validAfter'), validBefore: s('validBefore'), nonce: s('nonce').toLowerCase(), signature: s('signature').toLowerCase() },
  };
}
