/**
 * The Solana Pay reference key of an order (pure), derived from the order id and reversible: 32
 * bytes = a fixed 16-byte tag + the 16 random bytes of the `ord_` id. Any 32 bytes are a valid
 * account key for a read-only, non-signing account, which is all a reference is. Deriving it (rather
 * than storing a random one) costs order creation nothing, and the watcher maps a reference it sees
 * in a transaction back to its order id without a lookup table; only orders of this gateway carry
 * the tag.
 */
import { encodeBase58Fixed, isId } from '@tollgate/protocol';
import { getBase58Decoder, getBase58Encoder } from '@solana/codecs-strings';

const TAG = new TextEncoder().encode('tollgate:sol-ref'); // 16 bytes
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function idBytes(orderId: string): Uint8Array | undefined {
  if (!isId('ord', orderId)) return undefined;
  let n = 0n;
  for (const c of orderId.slice(4)) n = n * 58n + BigInt(ALPHABET.indexOf(c));
  const out = new Uint8Array(16);
  for (let i = 15; i >= 0; i--, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}

/** The reference key (base58) of an order id minted by `newId('ord')`. */
export function referenceOf(orderId: string): string {
  const bytes = idBytes(orderId);
  if (!bytes) throw new Error(`not an order id: ${orderId}`);
  const key = new Uint8Array(32);
  key.set(TAG, 0);
  key.set(bytes, 16);
  return getBase58Decoder().decode(key);
}

/** The order id a reference key names, or undefined when it is not one of this gateway's references. */
export function orderIdOfReference(reference: string): string | undefined {
  let key: Uint8Array;
  try {
    key = Uint8Array.from(getBase58Encoder().encode(reference));
  } catch {
    return undefined;
  }
  if (key.length !== 32 || TAG.some((b, i) => key[i] !== b)) return undefined;
  return `ord_${encodeBase58Fixed(key.subarray(16))}`;
}
