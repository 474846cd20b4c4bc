import type { RouteDef } from './http/route.ts';
import { createCheckoutSession } from './checkout/routes/createSession.ts';
import { publicBindCheckoutSession } from './checkout/routes/public_bindSession.ts';
import { publicGetCheckoutSession } from './checkout/routes/public_getSession.ts';
import { publicGetCheckoutSessionStatus } from './checkout/routes/public_getSessionStatus.ts';
import { publicGetSolanaPayLabel, publicPostSolanaPayTransaction } from './checkout/routes/public_solanaPay.ts';
import { adminAddWallet } from './merchants/routes/admin_addWallet.ts';
import { adminCreateApiKey } from './merchants/routes/admin_createApiKey.ts';
import { adminCreateMerchant } from './merchants/routes/admin_createMerchant.ts';
import { adminGetMerchant } from './merchants/routes/admin_getMerchant.ts';
import { adminRevokeApiKey } from './merchants/routes/admin_revokeApiKey.ts';
import { adminSetCardRail } from './merchants/routes/admin_setCardRail.ts';
import { publicStartCardPayment } from './rails/card/routes/public_startCardPayment.ts';
import { publicTestCardPayment } from './rails/card/routes/public_testCardPayment.ts';
import { publicProcessorNotification } from './rails/card/routes/public_processorNotification.ts';
import { refundOrder } from './refunds/routes/refundOrder.ts';
import { listRefunds } from './refunds/routes/listRefunds.ts';
import { adminRefundCardOrder } from './rails/card/routes/admin_refundCardOrder.ts';
import { adminHoldCardOrder, adminReleaseCardHold } from './rails/card/routes/admin_cardHold.ts';
import { adminSimulateCardEvent } from './rails/card/routes/admin_simulateCardEvent.ts';
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
import { publicReceiptKey } from './mpp/routes/public_receiptKey.ts';
import { publicMppVerify } from './mpp/routes/public_verify.ts';
import { merchantListRoutePrices } from './mpp/routes/merchant_listRoutePrices.ts';
import { merchantSetRoutePrice } from './mpp/routes/merchant_setRoutePrice.ts';
import { cancelOrder } from './orders/routes/cancelOrder.ts';
import { createOrder } from './orders/routes/createOrder.ts';
import { getOrder } from './orders/routes/getOrder.ts';
import { getOrderProof } from './orders/routes/getOrderProof.ts';
import { adminListCallbacks } from './settlement/routes/admin_listCallbacks.ts';
import { adminReconciliation } from './orders/routes/admin_reconciliation.ts';
import { portalListUnclaimedTransfers } from './portal/routes/listUnclaimedTransfers.ts';
import { adminCreateLink } from './quickpay/routes/admin_createLink.ts';
import { adminCreateProduct } from './quickpay/routes/admin_createProduct.ts';
import { adminDeactivateLink } from './quickpay/routes/admin_deactivateLink.ts';
import { adminListLinks } from './quickpay/routes/admin_listLinks.ts';
import { adminListProducts } from './quickpay/routes/admin_listProducts.ts';
import { adminListLinkSessions } from './quickpay/routes/admin_listLinkSessions.ts';
import { merchantCreateLink } from './quickpay/routes/merchant_createLink.ts';
import { merchantCreateProduct } from './quickpay/routes/merchant_createProduct.ts';
import { merchantGetLink } from './quickpay/routes/merchant_getLink.ts';
import { merchantGetProduct } from './quickpay/routes/merchant_getProduct.ts';
import { merchantListLinks } from './quickpay/routes/merchant_listLinks.ts';
import { merchantListLinkSessions } from './quickpay/routes/merchant_listLinkSessions.ts';
import { merchantListProducts } from './quickpay/routes/merchant_listProducts.ts';
import { merchantUpdateLink } from './quickpay/routes/merchant_updateLink.ts';
import { merchantUpdateProduct } from './quickpay/routes/merchant_updateProduct.ts';
import { publicCreateQuickPaySession } from './quickpay/routes/public_createSession.ts';
import { publicGetAgentMd } from './quickpay/routes/public_getAgentMd.ts';
import { publicGetLink } from './quickpay/routes/public_getLink.ts';
import { publicGetManifest } from './quickpay/routes/public_getManifest.ts';
import { goatCreateSession } from './quickpay/routes/goat_createSession.ts';
import { goatGetAgentMd } from './quickpay/routes/goat_getAgentMd.ts';
import { goatGetManifest } from './quickpay/routes/goat_getManifest.ts';
import { goatGetMerchant } from './quickpay/routes/goat_getMerchant.ts';
import { goatGetSession } from './quickpay/routes/goat_getSession.ts';
import { publicGetQuickPaySession } from './quickpay/routes/public_getSession.ts';
import { publicQuickPayTestCardPayment } from './quickpay/routes/public_testCardPayment.ts';
import { adminListChains } from './settlement/routes/admin_listChains.ts';
import { adminSettlementStatus } from './settlement/routes/admin_settlementStatus.ts';
import { adminRegisterCallback } from './settlement/routes/admin_registerCallback.ts';
import { adminRefundOrder } from './settlement/routes/admin_refundOrder.ts';
import { submitCalldataSignature } from './settlement/routes/merchant_submitCalldataSignature.ts';
import { submitAuthorization } from './settlement/routes/merchant_submitAuthorization.ts';
import { publicX402Settle } from './x402/routes/public_settle.ts';
import { merchantListX402Settlements } from './x402/routes/merchant_listSettlements.ts';
import { publicX402Supported } from './x402/routes/public_supported.ts';
import { publicX402Verify } from './x402/routes/public_verify.ts';
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
import { adminCreatePortalUser } from './portal/routes/admin_createPortalUser.ts';
import { portalListCheckoutSessions } from './portal/routes/listCheckoutSessions.ts';
import { portalSetReturnUrls } from './portal/routes/setReturnUrls.ts';
import { portalListCallbacks } from './portal/routes/listCallbacks.ts';
import { portalLogin } from './portal/routes/public_login.ts';
import { portalOperatorLogin } from './portal/routes/public_operatorLogin.ts';
import { portalAcceptInvitation } from './portal/routes/public_acceptInvitation.ts';
import { portalGetSession } from './portal/routes/getSession.ts';
import { portalGetSessionState } from './portal/routes/getSessionState.ts';
import { portalLogout } from './portal/routes/logout.ts';
import { portalListMerchants } from './portal/routes/listMerchants.ts';
import { portalSelectMerchant } from './portal/routes/selectMerchant.ts';
import { portalGetOverview } from './portal/routes/getOverview.ts';
import { portalCreateProduct, portalListProducts, portalUpdateProduct } from './portal/routes/products.ts';
import { portalCreateLink, portalListLinks, portalListLinkSessions, portalShareLink, portalUpdateLink } from './portal/routes/links.ts';
import { portalListMppPayments, portalListX402Settlements } from './portal/routes/machine.ts';
import { portalListOrders } from './portal/routes/listOrders.ts';
import { portalGetOrder } from './portal/routes/getOrder.ts';
import { portalListRefunds, portalRefundOrder } from './portal/routes/refunds.ts';
import { portalListWebhooks } from './portal/routes/listWebhooks.ts';
import { portalCreateWebhook } from './portal/routes/createWebhook.ts';
import { portalRotateWebhookSecret } from './portal/routes/rotateWebhookSecret.ts';
import { portalSendTestEvent } from './portal/routes/sendTestEvent.ts';
import { portalListDeliveries } from './portal/routes/listDeliveries.ts';
import { portalRedeliver } from './portal/routes/redeliver.ts';
import { portalListApiKeys } from './portal/routes/listApiKeys.ts';
import { portalCreateApiKey } from './portal/routes/createApiKey.ts';
import { portalRotateApiKey } from './portal/routes/rotateApiKey.ts';
import { portalRevokeApiKey } from './portal/routes/revokeApiKey.ts';
import { portalGetFees } from './portal/routes/getFees.ts';
import { portalGetSettings } from './portal/routes/getSettings.ts';
import { portalUpdateSettings } from './portal/routes/updateSettings.ts';
import { portalListTeam } from './portal/routes/listTeam.ts';
import { portalInvite } from './portal/routes/invite.ts';
import { portalDisableUser } from './portal/routes/disableUser.ts';
import { portalExportOrders } from './portal/routes/exportOrders.ts';
import { portalExportPayments } from './portal/routes/exportPayments.ts';
import { portalChangePassword } from './portal/routes/changePassword.ts';
import { portalLogoutEverywhere } from './portal/routes/logoutEverywhere.ts';
import { portalRevokeInvitation } from './portal/routes/revokeInvitation.ts';
import { portalSetRequireTotp, portalTotpDisable, portalTotpEnable, portalTotpRecoveryCodes, portalTotpSetup } from './portal/routes/totp.ts';
import { adminIssuePasswordReset, portalCompletePasswordReset, portalRequestPasswordReset } from './portal/routes/passwordReset.ts';

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
  refundOrder,
  listRefunds,
  submitCalldataSignature,
  submitAuthorization,
  merchantGetSelf,
  createCheckoutSession,
  merchantSetRoutePrice,
  merchantListRoutePrices,
  merchantListMppPayments,
  merchantListX402Settlements,
  // merchant API: hosted quick-pay (products, payment links, their sessions)
  merchantCreateProduct,
  merchantListProducts,
  merchantGetProduct,
  merchantUpdateProduct,
  merchantCreateLink,
  merchantListLinks,
  merchantGetLink,
  merchantUpdateLink,
  merchantListLinkSessions,
  // public
  publicGetMerchant,
  // public machine payments (no merchant key; rate-limited per IP)
  publicMppChallenge,
  publicMppVerify,
  publicMppPayment,
  publicReceiptJwks,
  publicReceiptKey,
  // public x402 v2 facilitator (resource servers point their facilitator URL at /x402/v2)
  publicX402Supported,
  publicX402Verify,
  publicX402Settle,
  // public checkout (the checkout id is a bearer capability; rate-limited per IP)
  publicGetCheckoutSession,
  publicGetCheckoutSessionStatus,
  publicBindCheckoutSession,
  publicGetSolanaPayLabel,
  publicPostSolanaPayTransaction,
  // public card rail (rails/card)
  publicStartCardPayment,
  publicTestCardPayment,
  publicProcessorNotification,
  // public hosted quick-pay (link ids are public; rate-limited per IP like checkout)
  publicGetLink,
  publicCreateQuickPaySession,
  publicGetQuickPaySession,
  publicQuickPayTestCardPayment,
  publicGetManifest,
  goatGetManifest,
  goatGetAgentMd,
  goatGetMerchant,
  goatCreateSession,
  goatGetSession,
  publicGetAgentMd,
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
  // operator: hosted quick-pay
  adminCreateProduct,
  adminCreateLink,
  adminListLinks,
  adminListProducts,
  adminDeactivateLink,
  adminListLinkSessions,
  // operator: chains and DELEGATE settlement
  adminListChains,
  adminSettlementStatus,
  // operator: card rail
  adminRefundCardOrder,
  adminHoldCardOrder,
  adminReleaseCardHold,
  adminSimulateCardEvent,
  adminRegisterCallback,
  adminListCallbacks,
  adminReconciliation,
  portalListUnclaimedTransfers,
  adminRefundOrder,
  // operator: portal users
  adminIssuePasswordReset,
  adminCreatePortalUser,
  // merchant portal (session cookie + CSRF token; docs/portal.md)
  portalLogin,
  portalOperatorLogin,
  portalAcceptInvitation,
  portalGetSession,
  portalGetSessionState,
  portalLogout,
  portalLogoutEverywhere,
  portalChangePassword,
  portalRequestPasswordReset,
  portalCompletePasswordReset,
  portalTotpSetup,
  portalTotpEnable,
  portalTotpRecoveryCodes,
  portalTotpDisable,
  portalSetRequireTotp,
  portalListMerchants,
  portalSelectMerchant,
  portalGetOverview,
  portalListOrders,
  portalGetOrder,
  portalListRefunds,
  portalRefundOrder,
  portalListProducts,
  portalCreateProduct,
  portalUpdateProduct,
  portalListLinks,
  portalCreateLink,
  portalUpdateLink,
  portalShareLink,
  portalListLinkSessions,
  portalListMppPayments,
  portalListX402Settlements,
  portalListWebhooks,
  portalCreateWebhook,
  portalRotateWebhookSecret,
  portalSendTestEvent,
  portalListDeliveries,
  portalRedeliver,
  portalListApiKeys,
  portalCreateApiKey,
  portalRotateApiKey,
  portalRevokeApiKey,
  portalGetFees,
  portalGetSettings,
  portalUpdateSettings,
  portalSetReturnUrls,
  portalListCheckoutSessions,
  portalListCallbacks,
  portalListTeam,
  portalInvite,
  portalDisableUser,
  portalRevokeInvitation,
  portalExportOrders,
  portalExportPayments,
];

/** The routes whose auth is merchant HMAC: the shared security suite runs against each. */
export const MERCHANT_ROUTES = ROUTES.filter((r) => r.auth === 'merchant');
