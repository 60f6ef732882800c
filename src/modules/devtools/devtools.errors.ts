/** Errors of the developer tools (`POST /sandbox/trigger`, `POST /sandbox/fixtures`). */
import { errors } from '../../http/errors.ts';

/**
 * The route needs MANAGE (it creates customers and accounts); what it was asked to do also moves
 * money (a sandbox funding, a payment), which needs TRANSACT, as the API's own routes for it do.
 */
export const needsTransact = (what: string) =>
  errors.coded(403, 'FORBIDDEN', `${what} moves money: it needs the TRANSACT permission as well as MANAGE`, { missing: ['TRANSACT'] });
