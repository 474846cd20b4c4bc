import { recoverTypedDataAddress, type Hex } from 'viem';

/**
 * The payer proof of an open challenge (one issued without a payer: the `Payment` scheme before the
 * client names itself). Such a challenge takes the payer its credential names, so a bare
 * transaction hash would let anyone who sees a transfer on the chain claim it as theirs. The payer
 * must show it controls the paying key, for this challenge:
 *
 * - `authorization` credentials carry it already: the EIP-3009 signature is the payer's, its nonce
 *   is keccak256(challenge id ‖ realm), and the token checks it when the gateway settles;
 * - `hash` credentials carry `payload.signature`, an EIP-712 signature by the `source` address over
 *   the typed data below — the shape mppx itself uses for its proof credentials (domain
 *   `{ name: "MPP", version: "3", chainId }`, `Proof { address account, string challengeId,
 *   string realm }`), with the challenge's chain, id and realm (Tollgate's own, never the echoed one).
 *
 * Externally owned accounts only (ecrecover): a contract wallet (ERC-1271) cannot prove itself this
 * way; it pays bound challenges (payer_addr) or uses an authorization.
 */
export type PayerProof = { kind: 'signature'; signature: string } | { kind: 'authorization' };

const PAYER_PROOF_TYPES = {
  Proof: [
    { name: 'account', type: 'address' },
    { name: 'challengeId', type: 'string' },
    { name: 'realm', type: 'string' },
  ],
} as const;

export interface ProofTerms {
  account: string;
  chainId: number;
  challengeId: string;
  realm: string;
}

/** The EIP-712 typed data a `hash` payer signs (viem's `signTypedData` takes it as is). */
export function payerProofTypedData(t: ProofTerms) {
  return {
    domain: { name: 'MPP', version: '3', chainId: t.chainId },
    types: PAYER_PROOF_TYPES,
    primaryType: 'Proof' as const,
    message: { account: t.account as Hex, challengeId: t.challengeId, realm: t.realm },
  };
}

/** Whether `signature` is `t.account`'s EIP-712 signature over the proof of this challenge. */
export async function signatureProvesPayer(signature: string, t: ProofTerms): Promise<boolean> {
  try {
    const signer = await recoverTypedDataAddress({ ...payerProofTypedData(t), signature: signature as Hex });
    return signer.toLowerCase() === t.account.toLowerCase();
  } catch {
    // A malformed signature (bad recovery byte, s out of range) proves nothing.
    return false;
  }
}
