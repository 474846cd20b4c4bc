// The public checkout wire shapes this page reads (apps/server/src/checkout/views.ts). Only the fields the
// page uses are typed; the server may add more.

import { LIVE_ORDER_STATUSES, type SessionStatus } from '@tollgate/protocol/states';

export interface PaymentOption {
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals: number;
  amount_wei: string;
  /** display name of the network, from the server's configuration */
  chain_name?: string;
  /** block explorer base URL (`<explorer_url>/tx/<hash>`), when the chain's configuration names one */
  explorer_url?: string;
  /** Solana: the Wallet Standard chain of the cluster (`solana:mainnet`, …, `solana:localnet`) */
  wallet_chain?: string;
}

interface SessionOrder {
  order_id: string;
  status: string;
  /** FIAT_<PROCESSOR> for a card order */
  flow?: string;
  chain_id: number;
  token_symbol: string;
  pay_to_address: string;
  amount_wei: string;
  expires_at: number;
  /** Solana: the order's Solana Pay transfer request (`solana:` URL with its reference key) */
  payment_url?: string;
}

interface LineItem {
  name: string;
  quantity: number;
  amount?: string;
}

export interface PublicSession {
  checkout_id: string;
  checkout_type: string;
  status: SessionStatus;
  expires_at: number;
  merchant: { merchant_id: string; name: string; logo_url?: string };
  line_items: LineItem[];
  price?: string;
  /** e.g. ['crypto'] or ['crypto', 'fiat'] */
  payment_rails: string[];
  fiat_currency?: string;
  fiat_amount?: string;
  payment_options: PaymentOption[];
  order?: SessionOrder;
  success_url?: string;
  cancel_url?: string;
}

export interface StatusProjection {
  status: SessionStatus;
  order_id?: string;
  order_status?: string;
  tx_hash?: string;
}

export interface BindTerms {
  order_id: string;
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  pay_to_address: string;
  amount_wei: string;
  expires_at: number;
  payment_url?: string;
}

/** Order statuses that can still be paid (an expired or cancelled order can be replaced by a new bind). */
export const LIVE_ORDER: readonly string[] = LIVE_ORDER_STATUSES;

/** The server refuses a bind with less than this many seconds left (410 session_not_payable). */
export const MIN_PAYMENT_WINDOW_SECONDS = 60;

/** Answer of POST …/card (the card order of the session and what to do next). */
export interface CardStart {
  order_id: string;
  processor: string;
  currency: string;
  amount: string;
  order_status: string;
  payment_state: string;
  expires_at: number;
  next_action: { type: string; url?: string };
}

/** Answer of the TEST processor's card form. */
export interface TestCardResult {
  outcome: 'succeeded' | 'processing' | 'declined';
  decline_code?: string;
  card_last4: string;
  order_id: string;
  order_status: string;
  held_reasons?: string[];
}

export interface TestCard {
  number: string;
  exp_month: number;
  exp_year: number;
  cvc: string;
}
