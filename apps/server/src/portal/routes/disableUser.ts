import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf } from '../http.ts';
import { disableUser } from '../repo.ts';

export const portalDisableUser = defineRoute({
  method: 'POST',
  url: '/portal/api/team/:user_id/disable',
  auth: 'portal',
  portalRole: 'owner',
  summary: 'Owner: disable a portal user of the merchant and end its sessions',
  tags: ['portal'],
  params: Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  response: { 200: Type.Object({ user_id: Type.String(), disabled: Type.Boolean() }) },
  errors: [403],
  async handler(req, _reply, deps) {
    if (req.params.user_id === req.portal.userId) throw new AppError('invalid_request', 'you cannot disable yourself', 'user_id');
    const ok = await deps.db.transaction((tx) => disableUser(tx, merchantOf(req.portal), req.params.user_id, new Date(deps.clock.now())));
    if (!ok) throw new AppError('not_found', 'no such user', 'user_id');
    return { user_id: req.params.user_id, disabled: true };
  },
});
