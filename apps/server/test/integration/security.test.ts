import { after, before, describe } from 'node:test';
import { MERCHANT_ROUTES } from '../../src/routes.ts';
import { backends } from '../helpers/db.ts';
import { securitySuite, type SecurityContext } from '../helpers/security-suite.ts';
import { fakeChain, startTestServer } from '../helpers/server.ts';

for (const backend of backends()) {
  describe(`merchant route security (${backend})`, () => {
    let ctx: SecurityContext;
    before(async () => {
      const server = await startTestServer({ backend, chains: [fakeChain()] });
      const creds = await server.createMerchant({ topUp: '1.00' });
      const other = await server.createMerchant({ name: 'Other' });
      const victim = await server.createMerchant({ name: 'Revoked' });
      const r = await server.admin('DELETE', `/admin/v1/merchants/${victim.merchantId}/api-keys/${victim.apiKey}`);
      if (r.status !== 200) throw new Error(r.text);
      ctx = { server, creds, other, revoked: victim };
    });
    after(() => ctx.server.close());
    for (const route of MERCHANT_ROUTES) {
      describe(`${route.method} ${route.url}`, () => securitySuite(route, () => ctx));
    }
  });
}
