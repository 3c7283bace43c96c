import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../domain/access-policy.ts';
import type { Actor } from '../../domain/audit.ts';

/** Who each request in hand authenticated as, set by the API's handler before its route runs. */
const callers = new WeakMap<IncomingMessage, Principal>();

/** Records who a request authenticated as. */
export function setCaller(req: IncomingMessage, principal: Principal): void {
  callers.set(req, principal);
}

/** Who a request authenticated as; a route only runs once the handler set it. */
export function callerOf(req: IncomingMessage): Principal {
  const principal = callers.get(req);
  if (principal === undefined) throw new Error('a route ran before its caller was authenticated');
  return principal;
}

/** Who a request is, as actions and changes record them: the token's name and its id. */
export function actorOf(req: IncomingMessage): Actor {
  const { name, tokenId } = callerOf(req);
  return { by: name, byTokenId: tokenId };
}
