// A real OAuth 2.1 authorization server for purramcp's end-to-end test:
// oidc-provider (OpenID certified), configured for an MCP resource server
// and driven over HTTP through its development interactions (a login form
// that takes any login, then a consent form).
//
//   node oidc-provider.mjs RESOURCE [PORT]
//
// RESOURCE is the MCP endpoint the tokens are for (its RFC 8707 resource
// indicator); PORT is the loopback port to listen on (0 or absent: any).
// The access token lifetime, in seconds, is $OIDC_ACCESS_TOKEN_TTL
// (default 5). $OIDC_ACCESS_TOKEN_FORMAT is jwt (the default) or opaque;
// $OIDC_INTROSPECTION_CLIENT, as ID:SECRET, registers a confidential
// client for the resource server and turns on token introspection
// (RFC 7662, at ISSUER/token/introspection). The first line on stdout
// is the issuer URL; every later line is one JSON event, {"event": NAME,
// ...}, with grant types, prompts and error names, for the test to count
// refreshes, consents and refused grants. A grant event's "canary" lists the secrets of that exchange (the
// code, the PKCE verifier, the refresh token presented, the access and
// refresh tokens issued) so that the test can check that none of them
// shows in anything purramcp writes; this stdout is read only by the test.
// It serves until it is killed or its stdin closes.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

import Provider from 'oidc-provider';

const [resource, portArg] = process.argv.slice(2);
if (!resource || !URL.canParse(resource)) {
  console.error('usage: node oidc-provider.mjs RESOURCE [PORT]');
  process.exit(2);
}
const port = Number(portArg ?? 0);
const accessTokenTTL = Number(process.env.OIDC_ACCESS_TOKEN_TTL ?? 5);
const accessTokenFormat = process.env.OIDC_ACCESS_TOKEN_FORMAT ?? 'jwt';
const introspectionClient = process.env.OIDC_INTROSPECTION_CLIENT ?? '';
if (!['jwt', 'opaque'].includes(accessTokenFormat) || (introspectionClient !== '' && !/^[^:]+:.+$/.test(introspectionClient))) {
  console.error('oidc-provider.mjs: bad OIDC_ACCESS_TOKEN_FORMAT or OIDC_INTROSPECTION_CLIENT');
  process.exit(2);
}
// The resource server's own client: it authenticates to the introspection
// endpoint and does nothing else.
const clients = [];
if (introspectionClient !== '') {
  const [clientId, ...secret] = introspectionClient.split(':');
  clients.push({ client_id: clientId, client_secret: secret.join(':'), token_endpoint_auth_method: 'client_secret_basic',
    grant_types: [], response_types: [], redirect_uris: [] });
}
if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(accessTokenTTL) || accessTokenTTL < 1) {
  console.error('oidc-provider.mjs: bad PORT or OIDC_ACCESS_TOKEN_TTL');
  process.exit(2);
}

// A fresh signing key per run: access tokens are JWTs the resource server
// verifies against this key, published at the jwks_uri.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };

const emit = (event, fields = {}) => process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);

// The issuer needs the port, so the server listens first and hands its
// requests to the provider once that exists.
let callback;
const server = createServer((req, res) => callback(req, res));
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    clients,
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // purramcp registers itself dynamically (RFC 7591) as a public client
    // (token_endpoint_auth_method none) with an http://127.0.0.1:PORT/callback
    // redirect URI and no application_type. Native is the default here so
    // the RFC 8252 loopback rule applies: any port matches the registered
    // one. The client's own metadata still overrides these defaults.
    clientDefaults: {
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    scopes: ['openid', 'offline_access', 'mcp:tools'],
    features: {
      // The default login and consent pages, which the test submits over
      // HTTP with a cookie jar, as a browser would.
      devInteractions: { enabled: true },
      registration: { enabled: true },
      // A public client revokes its own refresh token with its client_id;
      // revoking it ends its grant (every token of the grant).
      revocation: { enabled: true },
      introspection: { enabled: introspectionClient !== '' },
      resourceIndicators: {
        enabled: true,
        // A request without a resource parameter still gets the MCP
        // server's audience, so a token is never unbound.
        defaultResource: () => resource,
        // The refresh grant keeps the resource the grant was given for.
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== resource) {
            throw new Provider.errors.InvalidTarget();
          }
          return { scope: 'mcp:tools', audience: resource, accessTokenFormat, accessTokenTTL, jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    // PKCE is required for public clients (oidc-provider 9's default),
    // S256 only.
    pkce: { required: () => true },
    // A refresh token for every authorization code grant of a client that
    // may refresh, offline_access asked for or not, and not bound to the
    // provider's login session (a CLI has none after the browser closes).
    issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: () => false,
    // Every refresh rotates the refresh token; a consumed one presented
    // again is a replay, which oidc-provider answers by revoking the grant.
    rotateRefreshToken: () => true,
    ttl: {
      RefreshToken: 24 * 60 * 60,
      Grant: 24 * 60 * 60,
      Session: 24 * 60 * 60,
      Interaction: 10 * 60,
      AuthorizationCode: 60,
    },
  });
  provider.on('grant.success', (ctx) => {
    const { params } = ctx.oidc;
    const canary = [params.code, params.code_verifier, params.refresh_token, ctx.body?.access_token,
      ctx.body?.refresh_token, ctx.body?.id_token].filter((v) => typeof v === 'string' && v !== '');
    emit('grant', { grant_type: params.grant_type, canary });
  });
  provider.on('grant.error', (ctx, err) => emit('grant_error', { grant_type: ctx.oidc.params?.grant_type, error: err.name }));
  provider.on('interaction.started', (ctx, prompt) => emit('interaction', { prompt: prompt.name }));
  provider.on('registration_create.success', () => emit('registration'));
  provider.on('grant.revoked', () => emit('grant_revoked'));
  provider.on('introspection.error', (ctx, err) => emit('introspection_error', { error: err.name }));
  provider.on('server_error', (ctx, err) => emit('server_error', { error: err.name }));
  callback = provider.callback();
  process.stdout.write(`${issuer}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
