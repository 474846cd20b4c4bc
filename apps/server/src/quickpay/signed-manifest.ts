import type { QuickPayContext } from './rails/port.ts';
import { buildManifest, MANIFEST_TYP, type Manifest } from './manifest.ts';
import { linkPaymentOptions } from './rails/crypto.ts';
import { quickpayOf } from './service.ts';
import { paymentOptions, publicLinkView } from './views.ts';

/**
 * A link's manifest, signed with the gateway's active Ed25519 key (the receipts' key set), or
 * undefined when there is no such link. Signed per request: the manifest carries the link's
 * current state and `issued_at`, and one Ed25519 signature costs ~50 µs.
 */
export async function signedManifest(deps: QuickPayContext, linkId: string): Promise<{ manifest: Manifest; signature: string; manifestUrl: string } | undefined> {
  const qp = quickpayOf(deps);
  const found = await qp.publicLink(linkId);
  if (!found) return undefined;
  const state = await qp.linkState(found.link, found.product);
  const options = found.link.payment_rails.includes('crypto') ? paymentOptions(await linkPaymentOptions(deps, found.link), found.product?.price ?? null, deps.config.chains) : [];
  const view = publicLinkView(found, state, options, deps.config.publicBaseUrl);
  const manifest = buildManifest(view, deps.config.publicBaseUrl, deps.clock.now());
  return { manifest, signature: await deps.mpp.receipts.signDocument(manifest, MANIFEST_TYP), manifestUrl: view.manifest_url };
}
