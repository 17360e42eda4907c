// OAuth 2.0 (RFC 6749) logic of the token and revocation endpoints, apart from
// HTTP: client authentication, the password and refresh_token grants, token
// issuance and revocation (RFC 7009).
import type { Clock } from '../../lib/clock.js';
import type { ApiConfig } from '../config/index.js';
import { OAuthError } from '../http/errors.js';
import type { ClientAppRepository, ClientAppRow } from './client-apps-repository.js';
import type { TokenPairRow, TokenRepository } from './tokens-repository.js';
import type { UserRepository } from './users-repository.js';
import type { LoginLimiter } from './login-limiter.js';
import { newToken, tokenHash, verifyAgainstNothing, verifyClientSecret, verifySecret } from './secrets.js';

/** What the OAuth logic touches: client apps and users to check, token
 * pairs to issue and revoke, the failed-login limiter, token lifetimes. */
export interface OAuthDeps {
  config: Pick<ApiConfig, 'tokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'scryptLog2N'>;
  clock: Clock;
  clientApps: Pick<ClientAppRepository, 'findByClientAppId'>;
  users: Pick<UserRepository, 'findByEmail'>;
  tokens: TokenRepository;
  loginLimiter: LoginLimiter;
}

type IssueDeps = Pick<OAuthDeps, 'config' | 'clock' | 'tokens'>;

export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_in: number;
  created_at: number;
}

/** Client credentials as sent: in the body (either name) or by HTTP Basic. */
export interface ClientCredentials {
  clientAppId: string;
  clientSecret: string;
  viaBasic: boolean;
}

/** The challenge RFC 6749 2.3.1 asks for when Basic authentication failed. */
export const BASIC_CHALLENGE = 'Basic realm="parkbench", charset="UTF-8"';

/** Checks the client's id and secret; throws invalid_client (401). */
export async function authenticateClient(
  ctx: Pick<OAuthDeps, 'clientApps'>,
  credentials: ClientCredentials | undefined,
): Promise<ClientAppRow> {
  if (credentials === undefined)
    throw new OAuthError(
      'invalid_client',
      'Client authentication is required: client_app_id and client_secret, or HTTP Basic.',
    );
  const client = await ctx.clientApps.findByClientAppId(credentials.clientAppId);
  const ok = await verifyClientSecret(credentials.clientSecret, client?.client_secret_hash);
  if (!client || !ok) {
    throw new OAuthError(
      'invalid_client',
      undefined,
      credentials.viaBasic ? { 'WWW-Authenticate': BASIC_CHALLENGE } : {},
    );
  }
  return client;
}

export async function issueTokens(
  ctx: IssueDeps,
  userId: number,
  clientRowId: number,
  rotatedFrom?: TokenPairRow,
): Promise<TokenResponse> {
  const now = ctx.clock.now();
  const access = newToken();
  const refresh = newToken();
  const pair = {
    userId,
    clientAppRowId: clientRowId,
    accessHash: tokenHash(access),
    refreshHash: tokenHash(refresh),
    accessExpiresAt: now + ctx.config.tokenTtlSeconds * 1000,
    refreshExpiresAt: now + ctx.config.refreshTokenTtlSeconds * 1000,
  };
  if (rotatedFrom === undefined) await ctx.tokens.insert(pair, now);
  else if (!(await ctx.tokens.rotate(rotatedFrom, pair, now))) {
    // A concurrent request (of this process or another) used the same refresh token first: a reuse too.
    await ctx.tokens.revokeFamily(rotatedFrom.family_id, now);
    throw new OAuthError('invalid_grant', 'The refresh token was already used or revoked.');
  }
  return {
    access_token: access,
    refresh_token: refresh,
    token_type: 'bearer',
    expires_in: ctx.config.tokenTtlSeconds,
    created_at: Math.floor(now / 1000),
  };
}

/** grant_type=password; failures count against the limiter (429 past it). */
export async function passwordGrant(
  ctx: OAuthDeps,
  credentials: ClientCredentials | undefined,
  username: string,
  password: string,
  address: string,
): Promise<TokenResponse> {
  // The attempt takes its slot in both limits before any hashing (attempts in
  // flight count), so a blocked guesser costs no scrypt time and a concurrent
  // burst hashes at most the allowed number of guesses.
  const attempt = await ctx.loginLimiter.begin(username, address);
  if ('retryAfterSeconds' in attempt)
    throw new OAuthError('too_many_failed_logins', undefined, { 'Retry-After': String(attempt.retryAfterSeconds) });
  try {
    const client = await authenticateClient(ctx, credentials);
    const user = await ctx.users.findByEmail(username);
    const ok = user
      ? await verifySecret(password, user.password_hash)
      : await verifyAgainstNothing(password, ctx.config.scryptLog2N);
    if (!user || !ok) {
      await attempt.failed();
      throw new OAuthError('invalid_grant', 'Wrong username or password.');
    }
    const tokens = await issueTokens(ctx, user.id, client.id);
    await attempt.succeeded();
    return tokens;
  } finally {
    // A bad client or an error (a busy database) is no verdict on the password.
    await attempt.abandon();
  }
}

/** grant_type=refresh_token: rotates; the old pair (access token included)
 * stops working. A refresh token used again (rotated or revoked) revokes its
 * whole family, every pair descended from it, as RFC 9700 4.14.2 asks: the
 * server cannot tell the thief from the client, so both lose the tokens and
 * the driver logs in again. */
export async function refreshGrant(ctx: IssueDeps, client: ClientAppRow, refreshToken: string): Promise<TokenResponse> {
  const pair = await ctx.tokens.findByRefreshHash(tokenHash(refreshToken));
  const now = ctx.clock.now();
  const invalid = () =>
    new OAuthError('invalid_grant', 'The refresh token is unknown, revoked, expired or was issued to another client.');
  // Another client's token is left alone, as revocation leaves it (RFC 7009).
  if (!pair || pair.client_app_id !== client.id) throw invalid();
  if (pair.revoked_at !== null) {
    await ctx.tokens.revokeFamily(pair.family_id, now);
    throw invalid();
  }
  if (pair.refresh_expires_at <= now) throw invalid();
  return await issueTokens(ctx, pair.user_id, client.id, pair);
}

/** RFC 7009: revokes the pair holding the token when it belongs to the
 * client; says nothing either way (the endpoint answers 200). */
export async function revokeToken(
  ctx: Pick<OAuthDeps, 'clock' | 'tokens'>,
  client: ClientAppRow,
  token: string,
  hint: string | undefined,
): Promise<void> {
  const hash = tokenHash(token);
  const pair =
    hint === 'refresh_token'
      ? ((await ctx.tokens.findByRefreshHash(hash)) ?? (await ctx.tokens.findByAccessHash(hash)))
      : ((await ctx.tokens.findByAccessHash(hash)) ?? (await ctx.tokens.findByRefreshHash(hash)));
  if (pair && pair.client_app_id === client.id) await ctx.tokens.revoke(pair.id, ctx.clock.now());
}
