import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_RETURN_URL_LENGTH, MAX_RETURN_URLS, returnUrlProblem } from '../../checkout/return-urls.ts';
import { merchantOf } from '../http.ts';

export const portalSetReturnUrls = defineRoute({
  method: 'PUT',
  url: '/portal/api/settings/return-urls',
  auth: 'portal',
  portalRole: 'owner',
  summary: 'Owner: replace the return-URL allowlist of checkout sessions (origin + path prefix, no query or fragment)',
  tags: ['portal'],
  body: Type.Object({ return_urls: Type.Array(Type.String({ minLength: 1, maxLength: MAX_RETURN_URL_LENGTH }), { maxItems: MAX_RETURN_URLS }) }, { additionalProperties: false }),
  response: { 200: Type.Object({ return_urls: Type.Array(Type.String()) }) },
  errors: [403],
  async handler(req, _reply, deps) {
    const urls = req.body.return_urls;
    // Same rules as the operator's PUT /admin/v1/merchants/{id}/return-urls.
    for (const [i, u] of urls.entries()) {
      const problem = returnUrlProblem(u);
      if (problem) throw new AppError('invalid_request', `return_urls[${i}] ${problem}`, 'return_urls');
      const p = new URL(u);
      if (p.search || p.hash) throw new AppError('invalid_request', `return_urls[${i}] must not have a query or fragment (the match is origin + path prefix)`, 'return_urls');
    }
    const m = await deps.merchants.setReturnUrls(merchantOf(req.portal), [...new Set(urls)]);
    if (!m) throw new AppError('merchant_not_found', 'merchant not found');
    return { return_urls: m.return_urls };
  },
});
