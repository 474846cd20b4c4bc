import { Type } from '@sinclair/typebox';
import { isAddress } from 'viem';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { ChainAddress } from '../../http/schemas.ts';
import { kindOfChain, normalizeSolanaAddress } from '../../chain/addresses.ts';
import { MerchantIdParams, WalletSchema } from './views.ts';

export const adminAddWallet = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/wallets',
  auth: 'admin',
  summary: 'Add (or replace) the receiving address for a configured chain and token',
  tags: ['admin'],
  params: MerchantIdParams,
  body: Type.Object({ chain_id: Type.Integer({ minimum: 1 }), token_symbol: Type.String({ minLength: 1, maxLength: 11 }), address: ChainAddress }, { additionalProperties: false }),
  response: { 201: WalletSchema },
  async handler(req, reply, deps) {
    const b = req.body;
    const solana = kindOfChain(deps.config, b.chain_id) === 'solana';
    if (solana) {
      if (!normalizeSolanaAddress(b.address)) throw new AppError('invalid_request', 'address must be a base58 Solana public key (32 bytes) on a Solana chain', 'address');
    } else if (!b.address.startsWith('0x')) throw new AppError('invalid_request', 'address must be a 0x EVM address on an EVM chain', 'address');
    else if (/^0x0{40}$/i.test(b.address)) throw new AppError('invalid_request', 'address must not be the zero address', 'address');
    // A typo in a receiving address sends payers' money nowhere: a mixed-case address must carry a
    // valid EIP-55 checksum (all-lowercase is accepted as unchecksummed).
    else if (!isAddress(b.address)) throw new AppError('invalid_request', 'address has an invalid EIP-55 checksum', 'address');
    // EVM addresses are stored lowercase; base58 keys are case-sensitive and kept as given.
    const address = solana ? b.address : b.address.toLowerCase();
    const out = await deps.merchants.addWallet(req.params.merchant_id, { chainId: b.chain_id, tokenSymbol: b.token_symbol, address });
    switch (out.kind) {
      case 'merchant_not_found':
        throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
      case 'chain_not_supported':
        throw new AppError('chain_not_supported', `chain ${b.chain_id} is not configured`, 'chain_id');
      case 'token_not_supported':
        throw new AppError('token_not_supported', `token ${b.token_symbol} is not configured on chain ${b.chain_id}`, 'token_symbol');
      case 'added':
        reply.status(201);
        return out.wallet;
    }
  },
});
