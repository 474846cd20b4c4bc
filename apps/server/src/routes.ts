import type { RouteDef } from './http/route.ts';
import { adminAddWallet } from './merchants/routes/admin_addWallet.ts';
import { adminCreateApiKey } from './merchants/routes/admin_createApiKey.ts';
import { adminCreateMerchant } from './merchants/routes/admin_createMerchant.ts';
import { adminGetMerchant } from './merchants/routes/admin_getMerchant.ts';
import { adminRevokeApiKey } from './merchants/routes/admin_revokeApiKey.ts';
import { adminTopUpFees } from './merchants/routes/admin_topUpFees.ts';
import { merchantGetSelf } from './merchants/routes/merchant_getSelf.ts';
import { publicGetMerchant } from './merchants/routes/public_getMerchant.ts';
import { cancelOrder } from './orders/routes/cancelOrder.ts';
import { createOrder } from './orders/routes/createOrder.ts';
import { getOrder } from './orders/routes/getOrder.ts';
import { getOrderProof } from './orders/routes/getOrderProof.ts';

/**
 * Every HTTP route of Tollgate, in one readable list. A new capability adds its folder and its
 * lines here. `auth` of each route is in its own file.
 */
export const ROUTES: readonly RouteDef<any, any, any>[] = [
  // merchant API (HMAC)
  createOrder,
  getOrder,
  getOrderProof,
  cancelOrder,
  merchantGetSelf,
  // public
  publicGetMerchant,
  // operator (admin bearer token)
  adminCreateMerchant,
  adminGetMerchant,
  adminAddWallet,
  adminTopUpFees,
  adminCreateApiKey,
  adminRevokeApiKey,
];

/** The routes whose auth is merchant HMAC: the shared security suite runs against each. */
export const MERCHANT_ROUTES = ROUTES.filter((r) => r.auth === 'merchant');
