import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { MerchantService } from '../merchants/service.ts';

/**
 * What the portal's services are built from: the composition root passes its deps (one portal
 * account service per such object, http.ts portalAuth), never the whole bag by type.
 */
export interface PortalDeps {
  db: Database;
  config: Config;
  clock: Clock;
  merchants: MerchantService;
}
