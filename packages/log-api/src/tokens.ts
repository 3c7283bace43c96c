import { answerGuard, isText, isTime, listOf, objectOf, oneOf } from './answer-guard.ts';

/** A tenant token as `GET /api/v1/tokens` lists it: never the token or its digest (docs/reference/tokens.md). */
export interface TokenItem {
  id: string;
  name: string;
  tenant: string;
  role: TokenRole;
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

/** What a tenant token may do in its tenant (docs/reference/tokens.md): read, or also change and replay. */
export const TOKEN_ROLES = ['read', 'manage'] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];

const isToken = objectOf<TokenItem>({
  id: isText,
  name: isText,
  tenant: isText,
  role: oneOf(TOKEN_ROLES),
  createdAt: isTime,
  createdBy: isText,
  expiresAt: (v, p) => (v === undefined ? undefined : isTime(v, p)),
});

/** Checks an answer of `GET /api/v1/tokens`. */
export const tokensAnswer = answerGuard<TokensList>({ tokens: listOf(isToken) });

/** Checks an answer of `POST /api/v1/tokens`. */
export const tokenCreatedAnswer = answerGuard<TokenCreatedAnswer>({ token: isToken, secret: isText });
