import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_RETURN_URL_LENGTH, MAX_RETURN_URLS, returnUrlProblem } from '../../checkout/return-urls.ts';
import { MerchantIdParams } from './views.ts';

/**
 * Replaces the merchant's checkout return-URL allowlist. A session's success_url / cancel_url must
 * have the same origin as an entry and a path under the entry's path (segment boundary; see
 * checkout/return-urls.ts). An empty list allows no return URL at all.
 */
export const adminSetReturnUrls = defineRoute({
  method: 'PUT',
  url: '/admin/v1/merchants/:merchant_id/return-urls',
  auth: 'admin',
  summary: 'Replace the return-URL allowlist of checkout sessions (origin + path prefix)',
  tags: ['admin'],
  params: MerchantIdParams,
  body: Type.Object({ return_urls: Type.Array(Type.String({ minLength: 1, maxLength: MAX_RETURN_URL_LENGTH }), { maxItems: MAX_RETURN_URLS }) }, { additionalProperties: false }),
  response: { 200: Type.Object({ merchant_id: Type.String(), return_urls: Type.Array(Type.String()) }) },
  async handler(req, _reply, deps) {
    const urls = req.body.return_urls;
    for (const [i, u] of urls.entries()) {
      const problem = returnUrlProblem(u);
      if (problem) throw new AppError('invalid_request', `return_urls[${i}] ${problem}`, 'return_urls');
      // Query and fragment would be ignored by the match: refuse them so nobody believes otherwise.
      const p = new URL(u);
      if (p.search || p.hash) throw new AppError('invalid_request', `return_urls[${i}] must not have a query or fragment (the match is origin + path prefix)`, 'return_urls');
    }
    const m = await deps.merchants.setReturnUrls(req.params.merchant_id, [...new Set(urls)]);
    if (!m) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return { merchant_id: m.id, return_urls: m.return_urls };
  },
});
