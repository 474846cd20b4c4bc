import type { CardConfig, Config } from '../../config/schema.ts';
import type { CardProcessor } from './port.ts';
import { TestCardProcessor } from './test/processor.ts';

/**
 * The deployment's card processor, from configuration. Absent configuration means TEST in the
 * test environment (the dev profile and every test deployment can rehearse card payments) and
 * none in production. The Stripe adapter is imported only when configured: the `stripe` package
 * costs start-up time and memory an installation without it should not pay.
 */
export async function createCardProcessor(config: Pick<Config, 'environment' | 'card'> & { masterKey?: Buffer }): Promise<CardProcessor | undefined> {
  const c: CardConfig = config.card ?? (config.environment === 'test' ? { processor: 'TEST' } : { processor: 'NONE' });
  switch (c.processor) {
    case 'NONE':
      return undefined;
    case 'TEST':
      // config/load.ts refuses this already; a Config built in code must not slip past either.
      if (config.environment === 'production') throw new Error('the TEST card processor is refused in production');
      return new TestCardProcessor(config.masterKey ?? Buffer.alloc(32));
    case 'STRIPE': {
      const { StripeCardProcessor } = await import('./stripe/processor.ts');
      return new StripeCardProcessor(c.stripe);
    }
  }
}
