import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { MerchantService } from '../merchants/service.ts';
import { RoutePricing } from './pricing.ts';

/**
 * Machine payments, as the composition root wires them: route prices, challenges, the verify core
 * and receipts. Front doors (the /mpp/v1 routes, the `Payment` scheme) use these and nothing else.
 */
export interface Mpp {
  pricing: RoutePricing;
}

export function createMpp(db: Database, config: Config, merchants: MerchantService, _clock: Clock): Mpp {
  const pricing = new RoutePricing(db, config, merchants);
  return { pricing };
}
