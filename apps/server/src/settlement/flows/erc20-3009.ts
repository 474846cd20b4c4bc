import type { DelegateFlow } from './port.ts';

/**
 * ERC20_3009: the token implements EIP-3009 (USDC). The payer either transfers to the settlement
 * contract or signs a `transferWithAuthorization` to it that the gateway relays (the payer pays
 * no gas, settlement/authorization.ts); either way the funds arrive in the pool as a Transfer the
 * watcher sees, and the order settles from the pool.
 */
export const erc20Eip3009Flow: DelegateFlow = {
  name: 'ERC20_3009',
  serves: (token) => token.eip3009 === true,
  relaysAuthorization: true,
  canPull: async () => false,
};
