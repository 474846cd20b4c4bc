import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { scannedHeads } from '../repo.ts';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const NullableAddress = Type.Union([Address, Type.Null()]);

const ChainViewSchema = Type.Object(
  {
    kind: Type.Literal('evm'),
    chain_id: Type.Integer(),
    name: Type.String(),
    /** the watcher's cursor: the last block it has scanned; null before its first tick */
    head_block: Type.Union([Type.Integer(), Type.Null()]),
    confirmations: Type.Integer(),
    finality_confirmations: Type.Integer(),
    tokens: Type.Array(Type.Object({ symbol: Type.String(), address: Address, decimals: Type.Integer(), eip3009: Type.Boolean() }, { additionalProperties: false })),
    delegate: Type.Object(
      {
        enabled: Type.Boolean(),
        core_address: NullableAddress,
        spent_address: NullableAddress,
        executor_address: NullableAddress,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const SolanaChainViewSchema = Type.Object(
  {
    kind: Type.Literal('solana'),
    chain_id: Type.Integer(),
    name: Type.String(),
    /** CAIP-2 id (`solana:` + the first 32 characters of the genesis hash) */
    network: Type.String(),
    genesis_hash: Type.String(),
    /** the follower's scan position (a slot); null before its first tick */
    head_slot: Type.Union([Type.Integer(), Type.Null()]),
    confirm_commitment: Type.Union([Type.Literal('confirmed'), Type.Literal('finalized')]),
    finality_commitment: Type.Literal('finalized'),
    tokens: Type.Array(Type.Object({ symbol: Type.String(), mint: Type.String(), decimals: Type.Integer(), program_id: Type.String() }, { additionalProperties: false })),
    delegate: Type.Object(
      {
        /** SOL_APPROVE_XFER is offered on this cluster (a delegate key is configured) */
        enabled: Type.Boolean(),
        /** the delegate's public key (base58): what payers approve; never its private half */
        delegate_address: Type.Union([Type.String(), Type.Null()]),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/**
 * The configured chains and their DELEGATE set-up, for operators and for merchants' adapter
 * authors (the `core_address` an adapter allowlists). `head_block` is read from the watcher's
 * cursor rather than the RPC endpoint: an admin read never waits on a slow node, and a cursor
 * that stops moving shows a stalled watcher. The executor address is derived from SETTLEMENT_KEY;
 * the key itself is never in a response.
 */
export const adminListChains = defineRoute({
  method: 'GET',
  url: '/admin/v1/chains',
  auth: 'admin',
  summary: 'List configured chains, their tokens and DELEGATE settlement addresses (operator)',
  tags: ['admin'],
  response: { 200: Type.Array(Type.Union([ChainViewSchema, SolanaChainViewSchema])) },
  async handler(_req, _reply, deps) {
    const heads = await scannedHeads(deps.db);
    const executor = deps.config.settlement?.executorAddress ?? null;
    const evm = deps.config.chains.map((c) => {
      // One pooled TollgateSettlement per chain is both the holder of payers' funds and the only caller of adapters.
      const contract = c.settlementContract ?? null;
      return {
        kind: 'evm' as const,
        chain_id: c.chainId,
        name: c.name,
        head_block: heads.get(c.chainId) ?? null,
        confirmations: c.confirmations,
        finality_confirmations: c.finalityConfirmations,
        tokens: c.tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals, eip3009: t.eip3009 === true })),
        delegate: { enabled: contract !== null && executor !== null, core_address: contract, spent_address: contract, executor_address: executor },
      };
    });
    const delegate = deps.config.solanaDelegate?.address ?? null;
    const solana = (deps.config.solanaChains ?? []).map((c) => ({
      kind: 'solana' as const,
      chain_id: c.chainId,
      name: c.name,
      network: c.network,
      genesis_hash: c.genesisHash,
      head_slot: heads.get(c.chainId) ?? null,
      confirm_commitment: c.confirmCommitment,
      finality_commitment: c.finalityCommitment,
      tokens: c.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program_id: t.programId })),
      delegate: { enabled: delegate !== null, delegate_address: delegate },
    }));
    return [...evm, ...solana];
  },
});
