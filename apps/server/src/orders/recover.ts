import type { Queryable } from '../db/database.ts';
import type { OrderRow, OrderToCreate } from './repo.ts';

/**
 * `recover_existing_order: true` on `POST /api/v1/orders` (GOAT Network's server SDK 0.4.0 sends it
 * when the merchant opts in, docs/migrating.md): a merchant retrying a create whose answer it lost
 * gets the order it already created back, instead of 409 `order_already_exists`.
 *
 * Only the same order: the same `dapp_order_id` with the same chain, token, payer, amount and
 * calldata, still awaiting payment. Anything else is a different request under a reused id and
 * stays refused, so the flag can never hand out terms the merchant did not ask for, nor terms of
 * an order that is paid, cancelled or expired.
 */
export async function recoverableOrder(q: Queryable, item: OrderToCreate): Promise<OrderRow | undefined> {
  const { rows } = await q.query<OrderRow>(
    `SELECT * FROM orders
      WHERE merchant_id = $1 AND dapp_order_id = $2 AND status = 'CHECKOUT_VERIFIED'
        AND chain_id = $3 AND token_contract = $4 AND from_address = $5 AND amount_wei = $6::numeric
        AND lower(coalesce(callback_calldata, '')) = lower($7)`,
    [item.merchantId, item.dappOrderId, item.chainId, item.tokenContract, item.fromAddress, item.amountWei.toString(), item.callbackCalldata ?? ''],
  );
  return rows[0];
}
