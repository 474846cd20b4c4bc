// Sign-in, invitation, settings, team, and the operator's merchant list.
import { api, type Session } from './api.ts';
import { h } from '@tollgate/checkout-ui/dom';
import { field, fmtTime, message, newPasswordPage, page, secretBox, select, table } from './ui.ts';
import { forgotPassword, loginForm, totpSection } from './pages-security.ts';

export function loginPage(onSession: (s: Session) => void): HTMLElement {
  const out = h('div', {});
  const token = h('input', { type: 'password', name: 'admin_token', autocomplete: 'off', required: true });
  const submit = (path: string, body: () => unknown) => async (e: Event) => {
    e.preventDefault();
    try {
      onSession(await api<Session>('POST', path, body()));
    } catch (err) {
      out.replaceChildren(message((err as Error).message, 'error'));
    }
  };
  return page(
    'Sign in',
    out,
    loginForm(onSession, out),
    forgotPassword(),
    h('details', {}, h('summary', {}, 'Operator sign-in'), h('form', { class: 'card', onsubmit: submit('operator/login', () => ({ admin_token: token.value })) }, field('Admin token', token), h('button', { type: 'submit' }, 'Sign in as operator'))),
  );
}

export function invitePage(token: string, onSession: (s: Session) => void): HTMLElement {
  return newPasswordPage({
    title: 'Accept invitation',
    label: 'Choose a password',
    button: 'Create my account',
    submit: async (password) => {
      const s = await api<Session>('POST', 'invitations/accept', { token, password });
      history.replaceState(null, '', '#/overview');
      onSession(s);
    },
  });
}

export async function settingsPage(session: Session): Promise<HTMLElement> {
  const s = await api<any>('GET', 'settings');
  const out = h('div', {});
  const owner = session.role === 'owner' || session.role === 'operator';
  const name = h('input', { name: 'name', value: s.name, required: true, maxlength: '200', ...(owner ? {} : { readonly: true }) });
  const logo = h('input', { name: 'logo_url', type: 'url', value: s.logo_url ?? '', placeholder: 'https://shop.example/logo.svg', ...(owner ? {} : { readonly: true }) });
  return page(
    'Settings',
    out,
    h(
      'form',
      {
        class: 'card',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            await api('PUT', 'settings', { name: name.value, logo_url: logo.value || null });
            out.replaceChildren(message('Saved.'));
          } catch (err) {
            out.replaceChildren(message((err as Error).message, 'error'));
          }
        },
      },
      field('Name', name),
      field('Logo URL', logo, 'https only; shown on the hosted checkout'),
      owner ? h('button', { type: 'submit', class: 'primary' }, 'Save') : null,
    ),
    h('h2', {}, 'Receiving'),
    h('dl', { class: 'facts' }, h('dt', {}, 'Merchant id'), h('dd', {}, s.merchant_id), h('dt', {}, 'Mode'), h('dd', {}, s.receive_type)),
    table(
      'Wallets',
      ['Chain', 'Token', 'Address'],
      s.wallets.map((w: any) => [String(w.chain_id), w.token_symbol, w.address]),
    ),
    h('h2', {}, 'Return URLs'),
    owner
      ? returnUrlsForm(s.return_urls)
      : s.return_urls.length
        ? h(
            'ul',
            {},
            s.return_urls.map((u: string) => h('li', {}, u)),
          )
        : h('p', {}, 'None: the hosted checkout accepts no success/cancel URL.'),
    accountSection(session),
    totpSection(session, s.require_totp === true, () => location.reload()),
  );
}

/** Your account: change password (users; the other sessions end) and sign out everywhere. */
function accountSection(session: Session): HTMLElement {
  const out = h('div', {});
  const fail = (err: unknown) => out.replaceChildren(message((err as Error).message, 'error'));
  const current = h('input', { type: 'password', name: 'current_password', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', name: 'new_password', autocomplete: 'new-password', minlength: '12', required: true });
  return h(
    'div',
    {},
    h('h2', {}, 'Your account'),
    out,
    session.email
      ? h(
          'form',
          {
            class: 'card',
            onsubmit: async (e: Event) => {
              e.preventDefault();
              try {
                const r = await api('POST', 'password', { current_password: current.value, new_password: next.value });
                current.value = next.value = '';
                out.replaceChildren(message(`Password changed; ${r.other_sessions_ended} other session(s) signed out.`));
              } catch (err) {
                fail(err);
              }
            },
          },
          field('Current password', current),
          field('New password', next, '12 characters or more'),
          h('button', { type: 'submit' }, 'Change password'),
        )
      : null,
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          try {
            await api('POST', 'logout/everywhere');
            location.hash = '#/login';
            location.reload();
          } catch (err) {
            fail(err);
          }
        },
      },
      session.email ? 'Sign out everywhere' : 'Sign out every operator session',
    ),
  );
}

/** The return-URL allowlist, one URL per line (owner). */
function returnUrlsForm(urls: string[]): HTMLElement {
  const out = h('div', {});
  const area = h('textarea', { name: 'return_urls', rows: '5', spellcheck: 'false' }, urls.join('\n'));
  return h(
    'form',
    {
      class: 'card',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          const list = area.value
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean);
          const r = await api('PUT', 'settings/return-urls', { return_urls: list });
          out.replaceChildren(message(`Saved ${r.return_urls.length} return URL(s).`));
        } catch (err) {
          out.replaceChildren(message((err as Error).message, 'error'));
        }
      },
    },
    out,
    field('Allowed success/cancel URLs, one per line', area, 'origin + path prefix; no query or fragment'),
    h('button', { type: 'submit' }, 'Save return URLs'),
  );
}

export async function teamPage(): Promise<HTMLElement> {
  const t = await api<any>('GET', 'team');
  const out = h('div', {});
  const email = h('input', { type: 'email', name: 'email', required: true });
  const role = select('role', [
    ['developer', 'developer'],
    ['viewer', 'viewer'],
    ['owner', 'owner'],
  ]);
  return page(
    'Team',
    out,
    table(
      'Users',
      ['Email', 'Role', 'Since', 'State', ''],
      t.users.map((u: any) => [
        u.email,
        u.role,
        fmtTime(u.created_at),
        u.disabled ? 'disabled' : 'active',
        u.disabled
          ? ''
          : h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: async () => {
                  try {
                    await api('POST', `team/${u.user_id}/disable`);
                    out.replaceChildren(message(`Disabled ${u.email}`));
                  } catch (err) {
                    out.replaceChildren(message((err as Error).message, 'error'));
                  }
                },
              },
              'Disable',
            ),
      ]),
    ),
    t.invitations.length
      ? table(
          'Open invitations',
          ['Email', 'Role', 'Expires', ''],
          t.invitations.map((i: any) => [
            i.email,
            i.role,
            fmtTime(i.expires_at),
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: async () => {
                  try {
                    await api('POST', 'team/invitations/revoke', { email: i.email });
                    out.replaceChildren(message(`Revoked the invitation of ${i.email}`));
                  } catch (err) {
                    out.replaceChildren(message((err as Error).message, 'error'));
                  }
                },
              },
              'Revoke',
            ),
          ]),
        )
      : null,
    h('h2', {}, 'Invite someone'),
    h(
      'form',
      {
        class: 'inline',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            const r = await api('POST', 'team/invitations', { email: email.value, role: role.value });
            out.replaceChildren(secretBox(`Invitation link for ${r.email} (${r.role})`, r.invitation_url));
          } catch (err) {
            out.replaceChildren(message((err as Error).message, 'error'));
          }
        },
      },
      field('Email', email),
      field('Role', role),
      h('button', { type: 'submit', class: 'primary' }, 'Create invitation link'),
    ),
  );
}

export async function merchantsPage(onSession: (s: Session) => void): Promise<HTMLElement> {
  const m = await api<any>('GET', 'merchants');
  return page(
    'Merchants',
    table(
      'Merchants',
      ['Merchant', 'Name', 'Created', ''],
      m.merchants.map((x: any) => [x.merchant_id, x.name, fmtTime(x.created_at), h('button', { type: 'button', onclick: async () => onSession(await api<Session>('POST', 'merchants/select', { merchant_id: x.merchant_id })) }, 'Open')]),
    ),
  );
}
