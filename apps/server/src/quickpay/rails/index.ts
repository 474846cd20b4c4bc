import type { QuickPayRailName } from '../validate.ts';
import { cardRail } from './card.ts';
import { cryptoRail } from './crypto.ts';
import type { QuickPayRail } from './port.ts';

/** The rails quick-pay sessions open on (one file each; the service never tests a rail's name). */
export const RAILS: Readonly<Partial<Record<QuickPayRailName, QuickPayRail>>> = Object.freeze({ crypto: cryptoRail, card: cardRail });
