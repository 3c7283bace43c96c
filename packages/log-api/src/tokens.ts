import { answerGuard, type Check, isText, isTime, listOf, objectOf } from './answer-guard.ts';

/** A tenant token as `GET /api/v1/tokens` lists it: never the token or its digest (docs/reference/tokens.md). */
export interface TokenItem {
  id: string;
  name: string;
  tenant: string;
  role: 'read' | 'manage';
  createdAt: string;
  createdBy: string;
  expiresAt?: string;
}

/** The answer of `GET /api/v1/tokens`. */
export interface TokensList {
  tokens: TokenItem[];
}

/** The answer of `POST /api/v1/tokens`: the token created, and the token itself, shown this once. */
export interface TokenCreatedAnswer {
  token: TokenItem;
  secret: string;
}

const isRole: Check = (v, p) => (v === 'read' || v === 'manage' ? undefined : p);
const isToken = objectOf<TokenItem>({
  id: isText,
  name: isText,
  tenant: isText,
  role: isRole,
  createdAt: isTime,
  createdBy: isText,
  expiresAt: (v, p) => (v === undefined ? undefined : isTime(v, p)),
});

/** Checks an answer of `GET /api/v1/tokens`. */
export const tokensAnswer = answerGuard<TokensList>({ tokens: listOf(isToken) });

/** Checks an answer of `POST /api/v1/tokens`. */
export const tokenCreatedAnswer = answerGuard<TokenCreatedAnswer>({ token: isToken, secret: isText });
