/**
 * `Authorization: Payment <credential>` (pure): the credential is base64url (no padding) JSON
 * `{ challenge: { id, realm, method, intent, request, expires? }, payload: { type, … }, source? }`,
 * as the `mppx` client serializes it. Tollgate accepts payload type `hash` (`{ type: "hash", hash }`:
 * the payer's transaction) and reads the payer from `source` (`did:pkh:eip155:<chain>:<address>`).
 * The echoed challenge is only a pointer: everything that matters is re-read from the stored
 * challenge its id names, never trusted from the credential.
 */
export type ParsedCredential =
  | { kind: 'hash'; challengeId: string; txHash: string; payer: string | undefined; sourceChainId: number | undefined }
  | { kind: 'unsupported'; type: string }
  | { kind: 'malformed'; reason: string };

const MAX_CREDENTIAL_LENGTH = 16 * 1024;

/** @example parseCredential('Payment eyJjaGFsbGVuZ2Ui…') // => { kind: 'hash', challengeId: 'ch_…', … } */
export function parseCredential(header: string): ParsedCredential {
  // Several schemes may share one Authorization header (RFC 9110 lists); take the Payment one.
  const part = header.split(',').map((s) => s.trim()).find((s) => /^Payment\s+/i.test(s));
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
  if (payload.type !== 'hash') return { kind: 'unsupported', type: String(payload.type) };
  if (typeof payload.hash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(payload.hash)) return { kind: 'malformed', reason: 'payload.hash must be a 32-byte hex transaction hash' };
  const m = typeof v.source === 'string' ? /^did:pkh:eip155:(\d{1,12}):(0x[0-9a-fA-F]{40})$/.exec(v.source) : null;
  return { kind: 'hash', challengeId: id, txHash: payload.hash.toLowerCase(), payer: m?.[2]?.toLowerCase(), sourceChainId: m ? Number(m[1]) : undefined };
}
