import type { QuickPayRailName } from '../validate.ts';
import { cryptoRail } from './crypto.ts';
import type { QuickPayRail } from './port.ts';

/**
 * The rails this build can open sessions on. The card rail is its own issue: until it lands, a
 * link may not offer it (link creation refuses `card`) and a session on it is refused.
 */
export const RAILS: Readonly<Partial<Record<QuickPayRailName, QuickPayRail>>> = Object.freeze({ crypto: cryptoRail });
