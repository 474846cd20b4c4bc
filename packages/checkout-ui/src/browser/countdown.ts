// The countdown line ("Time left to pay: 4:59"), redrawn every second from the session's (or the
// bound order's) expiry and the server's clock (lib/countdown.ts does the arithmetic). The window
// closing on the choose screen ends the page; a window closing during an attempt does not (the
// transfer may already be on its way).
import { formatCountdown, secondsLeft } from '../lib/countdown.ts';
import { MIN_PAYMENT_WINDOW_SECONDS } from '../lib/types.ts';
import { expired, tooLate } from './outcomes.ts';
import { api, busy, finished, onFinish, payment, say, screenId, session, ui } from './page.ts';
import { setText } from './dom.ts';

let tickTimer: ReturnType<typeof setInterval> | undefined;
let warnedMinute = false;
/** a card payment is processing or held: no countdown (the processor has the payment) */
let cardPaid = false;

onFinish(() => tickTimer && clearInterval(tickTimer));

/** Starts the once-a-second redraw (after the first screen, unless that was already final). */
export function startCountdown() {
  if (finished) return;
  tick();
  tickTimer = setInterval(tick, 1000);
}

/** The processor has the card payment: the countdown goes, for good. */
export function paidByCard() {
  cardPaid = true;
  tick();
}

/** Redraws the countdown now (also called when the poll saw the transfer, to hide it at once). */
export function tick() {
  if (!ui || finished) return;
  // A transfer on chain is judged by its block time, not by when it confirms: once the watcher has
  // seen it, a running clock would only worry the payer. (A hash from the wallet alone is not
  // enough: the transaction may still be mined after the window.)
  if (payment?.seen || cardPaid) {
    ui.timer.hidden = true;
    return;
  }
  const t = payment?.terms;
  const end = t ? Math.min(t.expiresAt, session.expires_at) : session.expires_at;
  const left = secondsLeft(end, Date.now() + api.clockOffset);
  ui.timer.hidden = false;
  // Before a payment starts, the checkout's own window; from the bind, the (often shorter) window
  // of the order being paid. Named differently, so the switch reads as a new deadline, not a jump.
  setText(ui.timer, left > 0 ? `${t ? 'Time left to pay' : 'Checkout open for'}: ${formatCountdown(left)}` : 'Time is up');
  if (left <= 60 && left > 0 && !warnedMinute) {
    warnedMinute = true;
    say('Less than a minute left to pay.');
  }
  if (!payment && left > 0 && left < MIN_PAYMENT_WINDOW_SECONDS && screenId === 'choose' && !busy) return tooLate();
  if (left === 0) {
    if (!payment) return expired();
    say('The payment window has closed. If you already sent the payment, keep this page open while it is checked.');
  }
}
