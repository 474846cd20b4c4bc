import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';

/** `tollgate portal …`: merchant portal users (a thin admin-API client). */
export const PORTAL_COMMANDS = ['portal'];

export const PORTAL_USAGE = `  portal add-user MERCHANT_ID --email EMAIL [--role owner|developer|viewer]
                                            a portal user (default owner); prints its password once
  portal reset-link EMAIL                   a single-use password reset link (24 h) to hand to the user`;

export async function runPortalCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, email: { type: 'string' }, role: { type: 'string', default: 'owner' } },
  });
  const [, sub, merchantId] = pos;
  if (sub === 'reset-link') {
    // The positional is the user's email here (emails are unique across merchants).
    if (!merchantId) throw new CliError(`missing EMAIL\n\n${PORTAL_USAGE}`);
    const settings = loadCliSettings(process.env);
    const out = await new AdminClient(settings.url, settings.adminToken).call('POST', '/admin/v1/portal-users/password-resets', { email: merchantId });
    print(out, o.json!);
    if (!o.json) console.log('\nThe link works once. Give it to the user over a channel you trust; it never reaches a log.');
    return;
  }
  if (sub !== 'add-user') throw new CliError(`unknown portal command ${sub ?? ''}\n\n${PORTAL_USAGE}`);
  if (!merchantId) throw new CliError(`missing merchant ID\n\n${PORTAL_USAGE}`);
  if (!o.email) throw new CliError(`missing --email\n\n${PORTAL_USAGE}`);
  if (!['owner', 'developer', 'viewer'].includes(o.role!)) throw new CliError('--role must be owner, developer or viewer');
  const settings = loadCliSettings(process.env);
  const out = await new AdminClient(settings.url, settings.adminToken).call('POST', `/admin/v1/merchants/${encodeURIComponent(merchantId)}/portal-users`, { email: o.email, role: o.role });
  print(out, o.json!);
  if (!o.json) console.log(`\nThe password is shown only once. Sign in at ${settings.url}/portal`);
}
