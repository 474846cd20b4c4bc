// Account security pages: the sign-in form's second step (TOTP), "forgot password", the reset
// link's page, the second-factor set-up (also the whole page of an enrollment session, when the
// merchant requires a factor), and the owner's "require it of everyone" switch.
import { api, ApiError, type Session } from './api.ts';
import { h } from '@tollgate/checkout-ui/dom';
import { field, message, newPasswordPage, page, qrSvg, secretBox } from './ui.ts';

const codeInput = (name = 'totp') => h('input', { name, inputmode: 'numeric', autocomplete: 'one-time-code', required: true, maxlength: '32', spellcheck: 'false' });

/**
 * The sign-in form: email and password; when the account has a second factor the server answers
 * `totp_required` and the same form asks for the code and sends all three.
 */
export function loginForm(onSession: (s: Session) => void, out: HTMLElement): HTMLElement {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const totp = codeInput();
  const totpField = field('Authentication code', totp, 'from your authenticator app, or a recovery code');
  totpField.hidden = true;
  totp.disabled = true;
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          onSession(await api<Session>('POST', 'login', { email: email.value, password: password.value, ...(totp.disabled ? {} : { totp: totp.value }) }));
        } catch (err) {
          if (err instanceof ApiError && err.code === 'totp_required') {
            totpField.hidden = false;
            totp.disabled = false;
            out.replaceChildren(message('Enter the code of your authenticator app.'));
            totp.focus();
            return;
          }
          out.replaceChildren(message((err as Error).message, 'error'));
        }
      },
    },
    field('Email', email),
    field('Password', password),
    totpField,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  return form;
}

/** "Forgot password?": mails a link when the deployment has SMTP, else says whom to ask. */
export function forgotPassword(): HTMLElement {
  const out = h('div', {});
  const email = h('input', { type: 'email', name: 'reset_email', autocomplete: 'username', required: true });
  return h(
    'details',
    {},
    h('summary', {}, 'Forgot password?'),
    h(
      'form',
      {
        class: 'card',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            await api('POST', 'password-resets', { email: email.value });
            out.replaceChildren(message('If this email has an account, a reset link is on its way (valid 30 minutes).'));
          } catch (err) {
            const text = err instanceof ApiError && err.code === 'password_reset_unavailable' ? 'This Tollgate sends no mail: ask your operator for a reset link.' : (err as Error).message;
            out.replaceChildren(message(text, 'error'));
          }
        },
      },
      out,
      field('Sign-in address', email),
      h('button', { type: 'submit' }, 'Send reset link'),
    ),
  );
}

/** The page a reset link opens (#/reset/<token>). */
export function resetPage(token: string): HTMLElement {
  return newPasswordPage({
    title: 'Set a new password',
    label: 'New password',
    button: 'Set password',
    submit: async (password, out) => {
      const r = await api('POST', 'password-resets/complete', { token, password });
      history.replaceState(null, '', '#/login');
      out.replaceChildren(message(`Password changed for ${r.email}; every session was signed out.`), h('p', {}, h('a', { href: '#/login' }, 'Sign in')));
    },
  });
}

/** Set-up of a second factor: secret + QR, then a code from the app confirms it. */
function totpSetup(done: () => void): HTMLElement {
  const out = h('div', {});
  const start = h(
    'button',
    {
      type: 'button',
      class: 'primary',
      onclick: async () => {
        try {
          const s = await api('POST', 'totp/setup', {});
          const code = codeInput('code');
          start.hidden = true;
          out.replaceChildren(
            h('p', {}, 'Scan this code with your authenticator app (or type the key), then enter the 6-digit code it shows.'),
            qrSvg(s.qr, 'QR code of the authenticator set-up'),
            h('p', {}, 'Key: ', h('code', { class: 'secret' }, s.secret)),
            h(
              'form',
              {
                class: 'inline',
                onsubmit: async (e: Event) => {
                  e.preventDefault();
                  try {
                    const r = await api('POST', 'totp/enable', { code: code.value });
                    out.replaceChildren(message('Two-factor sign-in is on.'), secretBox('Recovery codes (each works once if you lose your phone)', r.recovery_codes.join('\n')), h('button', { type: 'button', onclick: done }, 'Done'));
                  } catch (err) {
                    out.append(message((err as Error).message, 'error'));
                  }
                },
              },
              field('Code from the app', code),
              h('button', { type: 'submit', class: 'primary' }, 'Turn on'),
            ),
          );
        } catch (err) {
          out.replaceChildren(message((err as Error).message, 'error'));
        }
      },
    },
    'Set up two-factor sign-in',
  );
  return h('div', {}, start, out);
}

/** The whole page of an enrollment session: the merchant requires a factor this user lacks. */
export function enrollmentPage(onDone: () => void): HTMLElement {
  return page('Set up two-factor sign-in', h('p', {}, 'This merchant requires a second factor for every portal user. Set one up to continue.'), totpSetup(onDone));
}

/** Settings → "Two-factor sign-in": set up, new recovery codes, turn off; owners can require it. */
export function totpSection(session: Session, requireTotp: boolean, reload: () => void): HTMLElement | null {
  if (!session.email) return null;
  const out = h('div', {});
  const fail = (err: unknown) => out.replaceChildren(message((err as Error).message, 'error'));
  const code = codeInput('code');
  const owner = session.role === 'owner';
  return h(
    'div',
    {},
    h('h2', {}, 'Two-factor sign-in'),
    out,
    session.totp_enabled
      ? h(
          'form',
          { class: 'card', onsubmit: (e: Event) => e.preventDefault() },
          h('p', {}, 'On: signing in needs a code from your authenticator app.'),
          field('Current code (or a recovery code)', code),
          h(
            'button',
            {
              type: 'button',
              onclick: async () => {
                try {
                  const r = await api('POST', 'totp/recovery-codes', { code: code.value });
                  out.replaceChildren(secretBox('New recovery codes', r.recovery_codes.join('\n')));
                } catch (err) {
                  fail(err);
                }
              },
            },
            'New recovery codes',
          ),
          requireTotp
            ? null
            : h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  onclick: async () => {
                    try {
                      await api('POST', 'totp/disable', { code: code.value });
                      reload();
                    } catch (err) {
                      fail(err);
                    }
                  },
                },
                'Turn off',
              ),
        )
      : totpSetup(reload),
    owner
      ? h(
          'label',
          { class: 'check' },
          h('input', {
            type: 'checkbox',
            name: 'require_totp',
            ...(requireTotp ? { checked: true } : {}),
            onchange: async (e: Event) => {
              const box = e.target as HTMLInputElement;
              try {
                await api('PUT', 'settings/require-totp', { require_totp: box.checked });
                out.replaceChildren(message(box.checked ? 'Every user of this merchant now needs a second factor.' : 'A second factor is optional again.'));
              } catch (err) {
                box.checked = !box.checked;
                fail(err);
              }
            },
          }),
          ' Require two-factor sign-in for every user of this merchant',
        )
      : null,
  );
}
