import type { RouteDef } from './http/route.ts';
import { createCheckoutSession } from './checkout/routes/createSession.ts';
import { publicBindCheckoutSession } from './checkout/routes/public_bindSession.ts';
import { publicGetCheckoutSession } from './checkout/routes/public_getSession.ts';
import { publicGetCheckoutSessionStatus } from './checkout/routes/public_getSessionStatus.ts';
import { adminAddWallet } from './merchants/routes/admin_addWallet.ts';
import { adminCreateApiKey } from './merchants/routes/admin_createApiKey.ts';
import { adminCreateMerchant } from './merchants/routes/admin_createMerchant.ts';
import { adminGetMerchant } from './merchants/routes/admin_getMerchant.ts';
import { adminRevokeApiKey } from './merchants/routes/admin_revokeApiKey.ts';
import { adminSetCardRail } from './merchants/routes/admin_setCardRail.ts';
import { adminSetReturnUrls } from './merchants/routes/admin_setReturnUrls.ts';
import { adminSetUnderpayTolerance } from './merchants/routes/admin_setUnderpayTolerance.ts';
import { adminTopUpFees } from './merchants/routes/admin_topUpFees.ts';
import { merchantGetSelf } from './merchants/routes/merchant_getSelf.ts';
import { publicGetMerchant } from './merchants/routes/public_getMerchant.ts';
import { acceptOrderPayment } from './orders/routes/acceptPayment.ts';
import { adminListRoutePrices } from './mpp/routes/admin_listRoutePrices.ts';
import { adminSetRoutePrice } from './mpp/routes/admin_setRoutePrice.ts';
import { adminRotateReceiptKey } from './mpp/routes/admin_rotateReceiptKey.ts';
import { merchantListMppPayments } from './mpp/routes/merchant_listPayments.ts';
import { publicMppChallenge } from './mpp/routes/public_challenge.ts';
import { publicMppPayment } from './mpp/routes/public_payment.ts';
import { publicReceiptJwks } from './mpp/routes/public_jwks.ts';
import { publicMppVerify } from './mpp/routes/public_verify.ts';
import { merchantListRoutePrices } from './mpp/routes/merchant_listRoutePrices.ts';
import { merchantSetRoutePrice } from './mpp/routes/merchant_setRoutePrice.ts';
import { cancelOrder } from './orders/routes/cancelOrder.ts';
import { createOrder } from './orders/routes/createOrder.ts';
import { getOrder } from './orders/routes/getOrder.ts';
import { getOrderProof } from './orders/routes/getOrderProof.ts';
import { adminListCallbacks } from './settlement/routes/admin_listCallbacks.ts';
import { adminListChains } from './settlement/routes/admin_listChains.ts';
import { adminRegisterCallback } from './settlement/routes/admin_registerCallback.ts';
import { adminRefundOrder } from './settlement/routes/admin_refundOrder.ts';
import { submitCalldataSignature } from './settlement/routes/merchant_submitCalldataSignature.ts';
import { submitAuthorization } from './settlement/routes/merchant_submitAuthorization.ts';
import { adminCreateWebhook } from './webhooks/routes/admin_createWebhook.ts';
import { adminDisableWebhook } from './webhooks/routes/admin_disableWebhook.ts';
import { adminEnableWebhook } from './webhooks/routes/admin_enableWebhook.ts';
import { adminListDeliveries } from './webhooks/routes/admin_listDeliveries.ts';
import { adminListEvents } from './webhooks/routes/admin_listEvents.ts';
import { adminListWebhooks } from './webhooks/routes/admin_listWebhooks.ts';
import { adminRedeliver } from './webhooks/routes/admin_redeliver.ts';
import { adminRedeliverSince } from './webhooks/routes/admin_redeliverSince.ts';
import { adminRotateWebhookSecret } from './webhooks/routes/admin_rotateWebhookSecret.ts';
import { adminTriggerWebhookEvent } from './webhooks/routes/admin_triggerWebhookEvent.ts';

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
  acceptOrderPayment,
  submitCalldataSignature,
  submitAuthorization,
  merchantGetSelf,
  createCheckoutSession,
  merchantSetRoutePrice,
  merchantListRoutePrices,
  merchantListMppPayments,
  // public
  publicGetMerchant,
  // public machine payments (no merchant key; rate-limited per IP)
  publicMppChallenge,
  publicMppVerify,
  publicMppPayment,
  publicReceiptJwks,
  // public checkout (the checkout id is a bearer capability; rate-limited per IP)
  publicGetCheckoutSession,
  publicGetCheckoutSessionStatus,
  publicBindCheckoutSession,
  // operator (admin bearer token)
  adminCreateMerchant,
  adminGetMerchant,
  adminAddWallet,
  adminTopUpFees,
  adminCreateApiKey,
  adminRevokeApiKey,
  adminSetCardRail,
  adminSetReturnUrls,
  adminSetUnderpayTolerance,
  // operator: machine payments
  adminSetRoutePrice,
  adminListRoutePrices,
  adminRotateReceiptKey,
  // operator: webhooks
  adminCreateWebhook,
  adminListWebhooks,
  adminDisableWebhook,
  adminEnableWebhook,
  adminRotateWebhookSecret,
  adminTriggerWebhookEvent,
  adminListDeliveries,
  adminRedeliver,
  adminRedeliverSince,
  adminListEvents,
  // operator: chains and DELEGATE settlement
  adminListChains,
  adminRegisterCallback,
  adminListCallbacks,
  adminRefundOrder,
];

/** The routes whose auth is merchant HMAC: the shared security suite runs against each. */
export const MERCHANT_ROUTES = ROUTES.filter((r) => r.auth === 'merchant');
