// Quick-pay payment links in the portal: the same service and views as the merchant API
// (/api/v1/payment-links, quickpay/service.ts), behind the portal's session, role and CSRF checks;
// plus the share code (QR of the link's page, drawn by portal/qr.ts like the TOTP set-up's).
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { RAILS } from '../../quickpay/rails/index.ts';
import { quickpayOf } from '../../quickpay/service.ts';
import { LinkSchema, linkView, MerchantSessionSchema, merchantSessionView } from '../../quickpay/views.ts';
import { LinkCreateBody, LinkIdParams, LinkUpdateBody, limitOf, ListQuery } from '../../quickpay/routes/schemas.ts';
import { merchantOf } from '../http.ts';
import { qrPath } from '../qr.ts';

export const portalListLinks = defineRoute({
  method: 'GET',
  url: '/portal/api/payment-links',
  auth: 'portal',
  summary: "The session merchant's payment links, newest first",
  tags: ['portal'],
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(LinkSchema) }) },
  async handler(req, _reply, deps) {
    return { data: (await quickpayOf(deps).listLinks(merchantOf(req.portal), limitOf(req.query))).map((l) => linkView(l, deps.config.publicBaseUrl)) };
  },
});

export const portalCreateLink = defineRoute({
  method: 'POST',
  url: '/portal/api/payment-links',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Create a payment link (a product, or any amount within bounds)',
  tags: ['portal'],
  body: LinkCreateBody,
  response: { 201: LinkSchema },
  errors: [403],
  async handler(req, reply, deps) {
    const out = await quickpayOf(deps).createLink(merchantOf(req.portal), req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    reply.status(201);
    return linkView(out.link, deps.config.publicBaseUrl);
  },
});

export const portalUpdateLink = defineRoute({
  method: 'POST',
  url: '/portal/api/payment-links/:link_id',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Change a link’s limits, expiry or activity (`active: false` deactivates it); what it sells never changes',
  tags: ['portal'],
  params: LinkIdParams,
  body: LinkUpdateBody,
  response: { 200: LinkSchema },
  errors: [403],
  async handler(req, _reply, deps) {
    const out = await quickpayOf(deps).updateLink(merchantOf(req.portal), req.params.link_id, req.body);
    if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
    return linkView(out.link, deps.config.publicBaseUrl);
  },
});

export const portalShareLink = defineRoute({
  method: 'GET',
  url: '/portal/api/payment-links/:link_id/share',
  auth: 'portal',
  summary: "A link's page URL and its QR code (an SVG path: `size` modules square, quiet zone included)",
  tags: ['portal'],
  params: LinkIdParams,
  response: { 200: Type.Object({ url: Type.String(), qr: Type.Object({ size: Type.Integer(), path: Type.String() }) }) },
  async handler(req, _reply, deps) {
    const l = await quickpayOf(deps).getLink(merchantOf(req.portal), req.params.link_id);
    if (!l) throw new AppError('link_not_found', 'payment link not found', 'link_id');
    const { url } = linkView(l, deps.config.publicBaseUrl);
    return { url, qr: qrPath(url) };
  },
});

export const portalListLinkSessions = defineRoute({
  method: 'GET',
  url: '/portal/api/payment-links/:link_id/sessions',
  auth: 'portal',
  summary: "A link's quick-pay sessions with their orders, newest first (amount asked and paid, the payer's reference as memo)",
  tags: ['portal'],
  params: LinkIdParams,
  querystring: ListQuery,
  response: { 200: Type.Object({ data: Type.Array(MerchantSessionSchema) }) },
  async handler(req, _reply, deps) {
    const rows = await quickpayOf(deps).linkSessions(merchantOf(req.portal), req.params.link_id, limitOf(req.query));
    if (!rows) throw new AppError('link_not_found', 'payment link not found', 'link_id');
    const now = deps.clock.now();
    return { data: rows.map((v) => merchantSessionView(v, RAILS[v.session.rail]?.status(v, now) ?? 'OPEN')) };
  },
});
