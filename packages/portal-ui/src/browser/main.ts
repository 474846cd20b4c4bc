// The portal shell: session check, navigation, hash routes (#/orders, #/orders/<id>, …). Every page
// is built with DOM nodes and text nodes only (checkout-ui's dom.ts): nothing from the API becomes markup.
import { api, can, setCsrf, type Session } from './api.ts';
import { h, replace } from '@tollgate/checkout-ui/dom';
import { message } from './ui.ts';
import { merchantsPage, invitePage, loginPage, settingsPage, teamPage } from './pages-account.ts';
import { callbacksPage, exportsPage, feesPage, keysPage, webhooksPage } from './pages-dev.ts';
import { checkoutPage, orderPage, ordersPage } from './pages-orders.ts';
import { overviewPage } from './pages-overview.ts';
import { transfersPage } from './pages-transfers.ts';
import { loadChunk } from '../../../checkout-ui/src/browser/chunk.ts';
import type { commerce } from './commerce.ts';
import { enrollmentPage, resetPage } from './pages-security.ts';

const app = document.getElementById('app')!;
let session: Session | undefined;

const NAV: [string, string, Session['role']][] = [
  ['overview', 'Overview', 'viewer'],
  ['orders', 'Orders', 'viewer'],
  ['checkout', 'Checkout', 'viewer'],
  ['links', 'Payment links', 'viewer'],
  ['machine', 'Machine payments', 'viewer'],
  ['transfers', 'Unclaimed', 'viewer'],
  ['webhooks', 'Webhooks', 'viewer'],
  ['keys', 'API keys', 'viewer'],
  ['callbacks', 'Callbacks', 'viewer'],
  ['fees', 'Fees', 'viewer'],
  ['exports', 'Exports', 'viewer'],
  ['settings', 'Settings', 'viewer'],
  ['team', 'Team', 'owner'],
  ['merchants', 'Merchants', 'operator'],
];

function shell(s: Session, current: string, content: Node): HTMLElement {
  const links = NAV.filter(([, , r]) => can(s, r)).map(([k, label]) => h('li', {}, h('a', { href: `#/${k}`, ...(k === current ? { 'aria-current': 'page' } : {}) }, label)));
  return h(
    'div',
    { class: 'layout' },
    h(
      'header',
      { class: 'top' },
      h('span', { class: 'brand' }, 'Tollgate'),
      h('span', { class: 'who' }, `${s.merchant_name ?? 'no merchant selected'} · ${s.email ?? 'operator'} (${s.role})`),
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          onclick: async () => {
            await api('POST', 'logout').catch(() => {});
            session = undefined;
            location.hash = '#/login';
            void route();
          },
        },
        'Sign out',
      ),
    ),
    h('nav', { 'aria-label': 'Portal' }, h('ul', {}, links)),
    h('main', { id: 'main', tabindex: '-1' }, content),
  );
}

function onSession(s: Session) {
  session = s;
  setCsrf(s.csrf_token);
  if (/^#\/(login|invite|reset)/.test(location.hash) || !location.hash) location.hash = s.merchant_id ? '#/overview' : '#/merchants';
  else void route();
}

async function route(): Promise<void> {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = hash.split('?');
  const [name = 'overview', arg] = path.split('/');
  if (name === 'invite' && arg) return replace(app, h('main', { id: 'main' }, invitePage(arg, onSession)));
  if (name === 'reset' && arg) return replace(app, h('main', { id: 'main' }, resetPage(arg)));
  if (!session) {
    try {
      // Asked first so a visitor who is not signed in gets the form without a 401 in the console.
      if (!(await api<{ signed_in: boolean }>('GET', 'session/state')).signed_in) return replace(app, h('main', { id: 'main' }, loginPage(onSession)));
      session = await api<Session>('GET', 'session');
      setCsrf(session.csrf_token);
    } catch {
      return replace(app, h('main', { id: 'main' }, loginPage(onSession)));
    }
  }
  const s = session;
  if (s.totp_enrollment_required)
    return replace(
      app,
      h(
        'main',
        { id: 'main' },
        enrollmentPage(() => {
          session = undefined;
          location.hash = '#/overview';
          void route();
        }),
      ),
    );
  if (name === 'login') return void (location.hash = '#/overview');
  const needsMerchant = name !== 'merchants';
  if (needsMerchant && !s.merchant_id) return void (location.hash = '#/merchants');
  let content: Node;
  try {
    switch (name) {
      case 'orders':
        content = arg ? await orderPage(decodeURIComponent(arg), s) : await ordersPage(new URLSearchParams(query));
        break;
      case 'checkout':
        content = await checkoutPage(new URLSearchParams(query));
        break;
      case 'transfers':
        content = await transfersPage();
        break;
      case 'links': {
        const c = await loadChunk<typeof commerce>('commerce');
        content = arg ? await c.linkSessionsPage(decodeURIComponent(arg)) : await c.linksPage(s);
        break;
      }
      case 'machine':
        content = await (await loadChunk<typeof commerce>('commerce')).machinePage();
        break;
      case 'webhooks':
        content = await webhooksPage(s);
        break;
      case 'keys':
        content = await keysPage(s);
        break;
      case 'callbacks':
        content = await callbacksPage();
        break;
      case 'fees':
        content = await feesPage();
        break;
      case 'exports':
        content = exportsPage();
        break;
      case 'settings':
        content = await settingsPage(s);
        break;
      case 'team':
        content = await teamPage();
        break;
      case 'merchants':
        content = await merchantsPage(onSession);
        break;
      default:
        content = await overviewPage();
    }
  } catch (err) {
    // By status, not class: the lazily loaded chunk throws its own copy's ApiError.
    const st = (err as { status?: number }).status;
    if (st === 401) {
      session = undefined;
      return replace(app, h('main', { id: 'main' }, loginPage(onSession)));
    }
    content = h('section', {}, h('h1', { id: 'page-title', tabindex: '-1' }, st === 404 ? 'Not found' : 'Something went wrong'), message((err as Error).message, 'error'));
  }
  replace(app, shell(s, name, content));
  // Move focus to the new page's heading so keyboard and screen-reader users land on it.
  (document.getElementById('page-title') as HTMLElement | null)?.focus();
}

// The skip link targets #main, but the hash is the router's: move focus instead of navigating.
document.querySelector('.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main')?.focus();
});
window.addEventListener('hashchange', () => void route());
void route();
